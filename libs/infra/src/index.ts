export * from './embedded-postgres';
export * from './local-kafka';
export * from './free-port';
export * from './postgres-client';
export { isAlive, runCommand, sleep, spawnDaemon } from './process';
export * from './repo-root';
