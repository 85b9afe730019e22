/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT = new Map([
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
]);

/**
 * Text from outside (a task's error message, a name) made safe to print as
 * part of one line: every control character written as an escape (`\n`,
 * `\u001b`), so that it neither breaks the line (a reader splitting on
 * lines would take what follows for another record) nor drives the
 * terminal (colours, clearing the screen).
 */
export function oneLine(text: string): string {
  return text.replace(CONTROL, (c) => SHORT.get(c) ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}
