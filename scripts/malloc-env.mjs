// glibc tunables the server starts with on Linux, shared by the launcher (scripts/serve.mjs) and
// the benchmark (bench/run.ts), so that `npm run bench` measures the server `npm run serve` runs.
//
// glibc keeps a malloc arena per thread that allocates, and libvips and onnxruntime run many
// threads: MALLOC_ARENA_MAX=2 keeps fewer of those heaps. glibc also raises its mmap threshold
// after the first large buffer is freed, so later decode buffers (megabytes each) come from the
// heap and stay resident after the scan; MALLOC_MMAP_THRESHOLD_=131072 pins it, so every buffer
// of 128 KiB or more is returned to the system when freed. Together they keep the peak RSS of a
// burst of 16 photos under 400 MB (docs/PERFORMANCE.md). They only work when set before the
// process starts. Windows and macOS do not use glibc.

/** The variables, on Linux; none elsewhere. */
export const SERVER_MALLOC_ENV = process.platform === 'linux' ? { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' } : {};

/** `env` with the tunables added where it does not set them itself (an explicit value is kept). */
export function withServerMallocEnv(env) {
  const out = { ...env };
  for (const [name, value] of Object.entries(SERVER_MALLOC_ENV)) if (out[name] === undefined) out[name] = value;
  return out;
}
