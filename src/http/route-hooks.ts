/** A route's hooks of one kind as a list (Fastify accepts one function, a list, or none). */
export function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
