import { Type } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';

/** Withdraws the controllers of `faces` from the application when a setting turns them off, so
 * that their routes are absent (404) and the OpenAPI document does not list them: called from a
 * module's constructor, it runs after every module is constructed and before Nest registers routes
 * or the document is scanned (both read the modules' controllers then). */
export function withdrawControllersUnless(
  enabled: boolean,
  modules: ModulesContainer,
  faces: readonly Type[],
): void {
  if (enabled) return;
  for (const module of modules.values())
    if (faces.includes(module.metatype as Type)) module.controllers.clear();
}
