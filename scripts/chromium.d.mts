/** The path of Debian's chromium, installed with apt-get first when missing. */
export function ensureChromiumInstalled(): string;
/** Flags for chromium run as root in a container. */
export const CHROMIUM_ARGS: string[];
