import { AuthTables1732400000000 } from './migrations/1732400000000-auth-tables';

export * from './auth.store';
export * from './credentials';
export * from './password';
export * from './token';
export { AuthTables1732400000000 };

/** The migrations of the auth schema, in order, for a DataSource's `migrations` option. */
export const authMigrations = [AuthTables1732400000000];
