/**
 * Most characters of a task's error message (or name, or a progress string)
 * an event or a log line keeps. A message's first 1 KiB says what went
 * wrong; the whole stays in the job's stored result. A task failing with a
 * 5 MB message on every attempt would otherwise write 5 MB per event and
 * several times that per log line (message, error and stack each carry it).
 */
export const TEXT_KEPT_MAX = 1024;

/**
 * The first `max` characters (no half of a surrogate pair), then a
 * marker saying `what` was cut, its length, and where the whole is kept
 * (`whole`, a place and the command that shows it; none when it is kept
 * nowhere); short text as it is.
 */
export function cutText(text: string, what: string, whole: string | undefined, max = TEXT_KEPT_MAX): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… [${what} cut: ${text.length} characters${whereWhole(whole)}]`;
}

/** The marker's pointer to the whole value, when it is kept somewhere. */
export function whereWhole(whole: string | undefined): string {
  return whole === undefined ? '' : `; whole in ${whole}`;
}

/** Where a job's stored result keeps a value whole (its error, its last progress). */
export function inResult(jobId: string): string {
  return `the job's result: prefork result ${jobId}`;
}
