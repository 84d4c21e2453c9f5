/** Nest injection token for the loaded `Config`. */
export const CONFIG = Symbol('CONFIG');
