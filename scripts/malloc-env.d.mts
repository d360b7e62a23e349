/** glibc tunables the server starts with on Linux (scripts/malloc-env.mjs). */
export declare const SERVER_MALLOC_ENV: Readonly<Record<string, string>>;
/** `env` with the tunables added where it does not set them itself. */
export declare function withServerMallocEnv<T extends Record<string, string | undefined>>(env: T): T & Record<string, string>;
