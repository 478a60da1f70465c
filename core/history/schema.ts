/**
 * The history database's tables. `PRAGMA user_version` holds SCHEMA_VERSION; a
 * change of shape adds a version and the statements that bring an older file up to it.
 */

/** The shape this code reads and writes. */
export const SCHEMA_VERSION = 1;

/** Creates what is missing (idempotent). */
export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS runs (
  runId INTEGER PRIMARY KEY AUTOINCREMENT,
  -- which service: its socket path (only one service listens on a socket at a time)
  service TEXT NOT NULL,
  pid INTEGER NOT NULL,
  version TEXT NOT NULL,
  startedAt INTEGER NOT NULL,
  lastSeenAt INTEGER NOT NULL,
  stoppedAt INTEGER
);
CREATE TABLE IF NOT EXISTS jobs (
  runId INTEGER NOT NULL REFERENCES runs (runId),
  id TEXT NOT NULL,
  number INTEGER NOT NULL,
  name TEXT NOT NULL,
  state TEXT NOT NULL,
  submittedAt INTEGER NOT NULL,
  finishedAt INTEGER,
  lost INTEGER NOT NULL DEFAULT 0,
  spec TEXT NOT NULL,
  info TEXT NOT NULL,
  series TEXT NOT NULL DEFAULT '[]',
  output TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (runId, id)
);
CREATE INDEX IF NOT EXISTS jobs_by_submitted ON jobs (submittedAt);
CREATE TABLE IF NOT EXISTS stateChanges (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  runId INTEGER NOT NULL,
  jobId TEXT NOT NULL,
  at INTEGER NOT NULL,
  state TEXT NOT NULL,
  message TEXT
);
CREATE INDEX IF NOT EXISTS stateChanges_by_job ON stateChanges (runId, jobId);
CREATE TABLE IF NOT EXISTS launches (
  launchId INTEGER PRIMARY KEY AUTOINCREMENT,
  runId INTEGER NOT NULL REFERENCES runs (runId),
  request TEXT NOT NULL,
  caller TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL,
  jobId TEXT,
  requestedAt INTEGER NOT NULL
);
`;
