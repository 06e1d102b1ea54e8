/**
 * Gives the tests a PostgreSQL: the one `.ci/run` started (TOOL_RUNNER_DATABASE_URL), or a private
 * one started here and stopped at the end. Empty when the machine has no PostgreSQL.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres, stopPostgres } from '../scripts/postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const given = process.env.TOOL_RUNNER_DATABASE_URL;
  const started = given ? undefined : await startPostgres();
  project.provide('databaseUrl', given ?? started?.url ?? '');
  return () => {
    if (started) stopPostgres(started.dir);
  };
}
