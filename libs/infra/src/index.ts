export * from './embedded-postgres';
export * from './local-kafka';
export * from './free-port';
export { isAlive } from './process';
