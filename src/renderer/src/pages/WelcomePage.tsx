/** First run: create the shop account, sign in, or try the demo without an account. */
import { AuthForm } from '../components/AuthForm';
import { navigate } from '../hooks/useRoute';
import { useSession } from '../hooks/useSession';

export function WelcomePage() {
  const { continueAnonymously } = useSession();
  return (
    <section className="welcome" aria-labelledby="welcome-title">
      <h2 id="welcome-title">Welcome to TireWear</h2>
      <p className="lead">Tread depth from an ordinary tire photo, in seconds, at your counter.</p>
      <div className="welcome-grid">
        <AuthForm onSignedIn={() => navigate('/scan')} />
        <div className="panel">
          <h3>Just trying it?</h3>
          <p>Without an account you can analyze 3 photos a day. Results are not kept in a history.</p>
          <button type="button" className="secondary" onClick={continueAnonymously}>
            Continue without an account
          </button>
        </div>
      </div>
    </section>
  );
}
