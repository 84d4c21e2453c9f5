/** Test helpers for specs only (they use jest's `expect`): not exported by the domain's barrel, and
 * left out of the build (tsconfig.build.json excludes testing/). Import them by relative path. */
export * from './builders';
export * from './decider-spec';
