/** How libraries report to the process's logger. */
export type LogFn = (level: 'error' | 'warn' | 'info', message: string, extra?: object) => void;

export const ignoreLog: LogFn = () => undefined;
