/**
 * What a scan pack and Pro are, and where their codes come from. TireWear is sold with offline
 * license codes and has no shop of its own in the app: the codes come from whoever supplied
 * TireWear to the shop.
 */
export function LicenseHelp() {
  return (
    <div className="panel" role="region" aria-labelledby="license-help-title">
      <h3 id="license-help-title">Scan packs and Pro</h3>
      <ul>
        <li>A scan pack adds 100 scans that never expire. They are used after the month’s 10 free scans.</li>
        <li>Pro gives unlimited scans until its end date.</li>
      </ul>
      <p>
        Both come as a license code that starts with TWL1. Ask your TireWear supplier (whoever supplied TireWear to your shop) for one, then enter it above
        under “Redeem a license code”.
      </p>
    </div>
  );
}
