// Whether the process that started this one is gone (scripts/serve.mjs stops the server then):
// its id changed (POSIX re-parents an orphan) or that process no longer runs (Windows keeps an
// orphan's parent id, so there it is asked). A parent of another user answers EPERM: still there.
export function parentGone(parent, { ppid = () => process.ppid, kill = (pid, signal) => process.kill(pid, signal) } = {}) {
  if (ppid() !== parent) return true;
  try {
    kill(parent, 0);
    return false;
  } catch (error) {
    return error?.code === 'ESRCH';
  }
}
