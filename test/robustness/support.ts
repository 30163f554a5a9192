import type { ProblemBody } from '../helpers/http.js';

/** The JSON pointers (bodies) and parameter names (queries) a validation problem names. */
export function namedFields(problem: ProblemBody): string[] {
  return (problem.errors ?? []).map((e) => e.pointer ?? e.parameter ?? '');
}
