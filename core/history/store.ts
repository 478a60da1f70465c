/**
 * The job history on disk: one SQLite database (better-sqlite3) in WAL mode with
 * `synchronous = FULL`, so every write is on disk when its call returns and a
 * `kill -9` (or a power cut) at any point loses no committed record; a write cut
 * short is rolled back whole when the file is next opened. Every call is
 * synchronous: a job's final record is durable before the service goes on.
 *
 * Rows are keyed by (runId, job id): each start of a service is a run, and a
 * service (its socket path) continues its job numbers across runs, so ids stay
 * unique in its table.
 */
import { createRequire } from 'node:module';
import { chmodSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { HISTORY_DEFAULT_LIMIT, type HistoryEntry, type HistoryFilter, type HistoryStateChange, type IterationSample, type JobSpec } from '../protocol/history.js';
import type { JobInfo, JobState } from '../protocol/state.js';
import { HISTORY_FILE_NAME } from './dataDir.js';
import { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';
import type { MeasuredProfile } from '../service/serviceHistory.js';

/** A job of an earlier run that was not over when its service stopped. */
export interface LostJob {
  runId: number;
  id: string;
  /** Whether it had been admitted (it ran) or only waited. */
  started: boolean;
}

/** A launch request (the panel's Launch sheet) as recorded. */
export interface LaunchRow {
  launchId: number;
  runId: number;
  request: { file: string; name?: string; args?: string[]; hints?: JobSpec['hints'] };
  caller: 'local' | 'web';
  attempt: number;
  jobId: string | null;
}

/** What is kept: the newest `maxJobs` jobs, none older than `maxAgeMs`. */
export interface Retention {
  maxJobs: number;
  maxAgeMs: number;
}

/** Default retention: the last 2,000 jobs, at most 90 days old. */
export const DEFAULT_RETENTION: Retention = { maxJobs: 2000, maxAgeMs: 90 * 24 * 3600 * 1000 };

interface JobRow {
  runId: number;
  id: string;
  state: JobState;
  lost: number;
  spec: string;
  info: string;
  series: string;
  output: string;
}

const require = createRequire(import.meta.url);

/** Loads the native driver; throws with what to do when it cannot (e.g. built for another Node). */
function loadDriver(): typeof BetterSqlite3 {
  try {
    return require('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    throw new Error(`cannot load better-sqlite3 (${(error as Error).message.split('\n')[0]}); ` +
      `reinstall it for this Node (${process.version}) with \`npm rebuild better-sqlite3\``);
  }
}

export class HistoryStore {
  private readonly db: BetterSqlite3.Database;

  private constructor(readonly file: string) {
    const Database = loadDriver();
    this.db = new Database(file, { timeout: 5000 });
    try {
      this.db.pragma('journal_mode = WAL');
      // FULL: a commit is fsynced before it returns, so a finished job survives a power cut too.
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = ON');
      const version = this.db.pragma('user_version', { simple: true }) as number;
      if (version > SCHEMA_VERSION) {
        throw new Error(`${file} was written by a newer Salus (schema ${version}, this one knows ${SCHEMA_VERSION}); use that version, or another --data-dir`);
      }
      this.db.exec(SCHEMA_SQL);
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /**
   * Opens (creating) the history in `dataDir`, a folder only its user can open.
   * A file that is not a sound database is kept aside (`history.sqlite3.damaged-TIME`)
   * and a new one begun; `note` hears of it.
   */
  static open(dataDir: string, note: (line: string) => void = () => {}): HistoryStore {
    const file = join(dataDir, HISTORY_FILE_NAME);
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new Error(`cannot make the data folder ${dataDir} (${(error as Error).message}): pass --data-dir with a folder you can write`);
    }
    let store: HistoryStore;
    try {
      store = new HistoryStore(file);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') throw error;
      const aside = `${file}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
      }
      note(`salus: ${file} was not a sound database (${(error as Error).message}); kept it as ${aside} and began a new history`);
      store = new HistoryStore(file);
    }
    if (process.platform !== 'win32') chmodSync(file, 0o600);
    return store;
  }

  /** Records a start of the service; returns its runId. */
  beginRun(service: string, pid: number, version: string, at = Date.now()): number {
    const result = this.db.prepare('INSERT INTO runs (service, pid, version, startedAt, lastSeenAt) VALUES (?, ?, ?, ?, ?)')
      .run(service, pid, version, at, at);
    return Number(result.lastInsertRowid);
  }

  /** The run stopped cleanly (SIGINT, SIGTERM). */
  endRun(runId: number, at = Date.now()): void {
    this.db.prepare('UPDATE runs SET stoppedAt = ?, lastSeenAt = ? WHERE runId = ?').run(at, at, runId);
  }

  /** The run was alive at `at` (bounds when its lost jobs ended). */
  touchRun(runId: number, at = Date.now()): void {
    this.db.prepare('UPDATE runs SET lastSeenAt = ? WHERE runId = ?').run(at, runId);
  }

  /** The number for this service's next job (`job-N`): one past every number it used before. */
  nextJobNumber(service: string): number {
    const row = this.db.prepare('SELECT MAX(j.number) AS n FROM jobs j JOIN runs r ON r.runId = j.runId WHERE r.service = ?').get(service) as { n: number | null };
    return (row.n ?? 0) + 1;
  }

  /**
   * Fails every job of this service's earlier runs that was not over: its
   * service stopped (or died) under it. Returns them.
   */
  markLostJobs(service: string, currentRunId: number): LostJob[] {
    const rows = this.db.prepare(`SELECT j.runId, j.id, j.info, r.stoppedAt, r.lastSeenAt FROM jobs j JOIN runs r ON r.runId = j.runId
      WHERE r.service = ? AND j.runId < ? AND j.state NOT IN ('done', 'failed', 'killed')`).all(service, currentRunId) as
      Array<{ runId: number; id: string; info: string; stoppedAt: number | null; lastSeenAt: number }>;
    const lost: LostJob[] = [];
    const mark = this.db.transaction(() => {
      for (const row of rows) {
        const info = JSON.parse(row.info) as JobInfo;
        const started = info.startedAt !== null;
        const how = row.stoppedAt !== null ? 'the service was stopped' : 'the service ended unexpectedly';
        const message = `lost with the service: ${how} while the job ${started ? 'ran' : 'waited to start'}`;
        const endedAt = Math.max(row.stoppedAt ?? row.lastSeenAt, info.submittedAt);
        const updated: JobInfo = { ...info, state: 'failed', error: message, finishedAt: endedAt, lane: null };
        this.db.prepare("UPDATE jobs SET state = 'failed', lost = 1, finishedAt = ?, info = ? WHERE runId = ? AND id = ?")
          .run(endedAt, JSON.stringify(updated), row.runId, row.id);
        this.addStateChange(row.runId, row.id, { at: endedAt, state: 'failed', message });
        lost.push({ runId: row.runId, id: row.id, started });
      }
    });
    mark();
    return lost;
  }

  /** A job the service just opened. */
  insertJob(runId: number, number: number, info: JobInfo, spec: JobSpec): void {
    this.db.transaction(() => {
      this.db.prepare(`INSERT INTO jobs (runId, id, number, name, state, submittedAt, finishedAt, spec, info)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(runId, info.id, number, info.name, info.state, info.submittedAt, info.finishedAt, JSON.stringify(spec), JSON.stringify(info));
      this.addStateChange(runId, info.id, { at: info.submittedAt, state: info.state, message: null });
    })();
  }

  /** Replaces a job's recorded JobInfo (and series and output tail, when given) and records the state changes given, in one transaction. */
  updateJob(runId: number, info: JobInfo, extra: { series?: IterationSample[]; output?: string; changes?: HistoryStateChange[] } = {}): void {
    this.db.transaction(() => {
      this.db.prepare(`UPDATE jobs SET name = ?, state = ?, finishedAt = ?, info = ?,
        series = COALESCE(?, series), output = COALESCE(?, output) WHERE runId = ? AND id = ?`).run(
        info.name, info.state, info.finishedAt, JSON.stringify(info),
        extra.series ? JSON.stringify(extra.series) : null, extra.output ?? null, runId, info.id);
      for (const change of extra.changes ?? []) this.addStateChange(runId, info.id, change);
    })();
  }

  /** Changes a job's launch spec (the launcher knows its file and arguments). */
  updateSpec(runId: number, id: string, spec: JobSpec): void {
    this.db.prepare('UPDATE jobs SET spec = ? WHERE runId = ? AND id = ?').run(JSON.stringify(spec), runId, id);
  }

  /** Replaces a job's output tail. */
  setOutput(runId: number, id: string, output: string): void {
    this.db.prepare('UPDATE jobs SET output = ? WHERE runId = ? AND id = ?').run(output, runId, id);
  }

  /** Adds `; text` to a recorded job's error (e.g. what became of a lost job); returns the new error, or null without such a job. */
  appendError(runId: number, id: string, text: string): string | null {
    return this.batch(() => {
      const row = this.db.prepare('SELECT info FROM jobs WHERE runId = ? AND id = ?').get(runId, id) as { info: string } | undefined;
      if (!row) return null;
      const info = JSON.parse(row.info) as JobInfo;
      const error = info.error ? `${info.error}; ${text}` : text;
      this.db.prepare('UPDATE jobs SET info = ? WHERE runId = ? AND id = ?').run(JSON.stringify({ ...info, error }), runId, id);
      return error;
    });
  }

  /** The newest `limit` jobs of this service's earlier runs, oldest first, as `salus jobs` shows them. */
  earlierJobs(service: string, currentRunId: number, limit: number): JobInfo[] {
    const rows = this.db.prepare(`SELECT j.runId, j.info FROM jobs j JOIN runs r ON r.runId = j.runId
      WHERE r.service = ? AND j.runId < ? ORDER BY j.submittedAt DESC, j.number DESC LIMIT ?`).all(service, currentRunId, limit) as Array<{ runId: number; info: string }>;
    return rows.reverse().map((row) => ({ ...(JSON.parse(row.info) as JobInfo), fromEarlierRun: true, runId: row.runId }));
  }

  /**
   * What the newest job that ran `file` with `args` to a clean end (done, no GPU errors) measured of its memory:
   * its state between iterations and its largest iteration; null when no such job measured any.
   */
  measuredProfile(file: string, args: readonly string[]): MeasuredProfile | null {
    const rows = this.db.prepare(`SELECT runId, id, info FROM jobs WHERE state = 'done'
      AND json_extract(spec, '$.file') = ? AND json_extract(spec, '$.args') = json(?)
      ORDER BY submittedAt DESC, number DESC LIMIT 20`).all(file, JSON.stringify(args)) as Array<{ runId: number; id: string; info: string }>;
    for (const row of rows) {
      const info = JSON.parse(row.info) as JobInfo;
      const persistentBytes = info.memory.stateBytes ?? 0;
      const ephemeralBytes = info.memory.ephemeralPeakBytes ?? 0;
      if ((info.gpuErrors?.count ?? 0) === 0 && persistentBytes + ephemeralBytes > 0) {
        return { jobId: row.id, runId: row.runId, persistentBytes, ephemeralBytes };
      }
    }
    return null;
  }

  /** The output tail kept for this service's newest job with that id, or null. */
  output(service: string, id: string): string | null {
    const row = this.db.prepare(`SELECT j.output FROM jobs j JOIN runs r ON r.runId = j.runId
      WHERE r.service = ? AND j.id = ? ORDER BY j.runId DESC LIMIT 1`).get(service, id) as { output: string } | undefined;
    return row ? row.output : null;
  }

  /** `salus history`: this service's jobs (every service's, for null) of every run, newest first. */
  list(filter: HistoryFilter, service: string | null, currentRunId: number | null): HistoryEntry[] {
    const where = service === null ? ['1'] : ['runId IN (SELECT runId FROM runs WHERE service = ?)'];
    const params: unknown[] = service === null ? [] : [service];
    if (filter.states?.length) {
      where.push(`state IN (${filter.states.map(() => '?').join(', ')})`);
      params.push(...filter.states);
    }
    if (filter.name !== undefined) {
      where.push('name GLOB ?');
      params.push(filter.name);
    }
    if (filter.sinceMs !== undefined) {
      where.push('submittedAt >= ?');
      params.push(filter.sinceMs);
    }
    const sql = `SELECT runId, id, state, lost, spec, info, series, output FROM jobs
      WHERE ${where.join(' AND ')} ORDER BY submittedAt DESC, runId DESC, number DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...params, filter.limit ?? HISTORY_DEFAULT_LIMIT) as JobRow[];
    const changes = this.db.prepare('SELECT at, state, message FROM stateChanges WHERE runId = ? AND jobId = ? ORDER BY seq');
    return rows.map((row) => ({
      ...(JSON.parse(row.info) as JobInfo),
      runId: row.runId,
      fromEarlierRun: row.runId !== currentRunId,
      lost: row.lost === 1,
      spec: JSON.parse(row.spec) as JobSpec,
      stateChanges: changes.all(row.runId, row.id) as HistoryStateChange[],
      iterationSeries: JSON.parse(row.series) as IterationSample[],
    }));
  }

  /** Every run: which service, its process, and whether it stopped cleanly. */
  runs(): Array<{ runId: number; service: string; pid: number; stoppedAt: number | null }> {
    return this.db.prepare('SELECT runId, service, pid, stoppedAt FROM runs ORDER BY runId').all() as Array<{ runId: number; service: string; pid: number; stoppedAt: number | null }>;
  }

  // ---- launches -----------------------------------------------------------

  /** A launch was asked for; returns its id. */
  addLaunch(runId: number, request: LaunchRow['request'], caller: LaunchRow['caller'], attempt = 1, at = Date.now()): number {
    const result = this.db.prepare("INSERT INTO launches (runId, request, caller, attempt, status, requestedAt) VALUES (?, ?, ?, ?, 'waiting', ?)")
      .run(runId, JSON.stringify(request), caller, attempt, at);
    return Number(result.lastInsertRowid);
  }

  /** The launched process connected as `jobId`. */
  linkLaunch(launchId: number, jobId: string): void {
    this.db.prepare('UPDATE launches SET jobId = ? WHERE launchId = ?').run(jobId, launchId);
  }

  /**
   * A launch is settled: `started` (its job was admitted), `ended` (its job ended
   * before it started), `failed` (it never connected) or `relaunched`.
   */
  settleLaunch(launchId: number, status: 'started' | 'ended' | 'failed' | 'relaunched'): void {
    this.db.prepare("UPDATE launches SET status = ? WHERE launchId = ? AND status = 'waiting'").run(status, launchId);
  }

  /** Launches of this service's earlier runs whose jobs never started, oldest first. */
  waitingLaunches(service: string, currentRunId: number): LaunchRow[] {
    const rows = this.db.prepare(`SELECT l.launchId, l.runId, l.request, l.caller, l.attempt, l.jobId FROM launches l JOIN runs r ON r.runId = l.runId
      WHERE r.service = ? AND l.runId < ? AND l.status = 'waiting' ORDER BY l.launchId`).all(service, currentRunId) as Array<Omit<LaunchRow, 'request'> & { request: string }>;
    return rows.map((row) => ({ ...row, request: JSON.parse(row.request) as LaunchRow['request'] }));
  }

  // ---- upkeep -------------------------------------------------------------

  /** Deletes jobs past the retention (and their state changes); returns how many went. */
  prune(retention: Retention = DEFAULT_RETENTION, now = Date.now()): number {
    return this.db.transaction(() => {
      const old = `SELECT runId, id FROM jobs WHERE submittedAt < ? OR rowid NOT IN (SELECT rowid FROM jobs ORDER BY submittedAt DESC LIMIT ?)`;
      const args = [now - retention.maxAgeMs, retention.maxJobs];
      this.db.prepare(`DELETE FROM stateChanges WHERE (runId, jobId) IN (${old})`).run(...args);
      const deleted = this.db.prepare(`DELETE FROM jobs WHERE (runId, id) IN (${old})`).run(...args).changes;
      this.db.prepare(`DELETE FROM launches WHERE status != 'waiting' AND requestedAt < ?`).run(now - retention.maxAgeMs);
      return deleted;
    })();
  }

  /** Runs `writes` as one transaction: one sync to disk for all of them. */
  batch<T>(writes: () => T): T {
    return this.db.transaction(writes)();
  }

  /** Whether the file is sound (`PRAGMA integrity_check`). */
  integrityOk(): boolean {
    return this.db.pragma('integrity_check', { simple: true }) === 'ok';
  }

  close(): void {
    this.db.close();
  }

  private addStateChange(runId: number, jobId: string, change: HistoryStateChange): void {
    this.db.prepare('INSERT INTO stateChanges (runId, jobId, at, state, message) VALUES (?, ?, ?, ?, ?)')
      .run(runId, jobId, change.at, change.state, change.message);
  }
}
