/** Trace parsing: both formats, defaults, and errors that say where and what. */
import { describe, expect, it } from 'vitest';
import { formatTraceCsv, parseTrace } from '../../../core/sim/trace.js';

const HEADER = 'name,arrivalS,iterations,iterationMs,persistentBytes,ephemeralBytes,priority';

describe('parseTrace', () => {
  it('reads CSV with comments, blank lines, units, quoted names and the optional gapMs column', () => {
    const jobs = parseTrace([
      '# a comment',
      `${HEADER},gapMs`,
      'a,0,10,25.5,1MiB,4096,0,3',
      '',
      '"b, the second",1.5,2,100,0,0,-2,',
    ].join('\n'), 'jobs.csv');
    expect(jobs).toEqual([
      { name: 'a', arrivalS: 0, iterations: 10, iterationMs: 25.5, persistentBytes: 1024 ** 2, ephemeralBytes: 4096, priority: 0, gapMs: 3 },
      { name: 'b, the second', arrivalS: 1.5, iterations: 2, iterationMs: 100, persistentBytes: 0, ephemeralBytes: 0, priority: -2, gapMs: 0 },
    ]);
  });

  it('reads the optional durationMs (declared run time; blank: undeclared) and share columns, and writes them back', () => {
    const jobs = parseTrace(`${HEADER},durationMs,share\nd,0,10,100,0,0,0,1500,3\nu,0,5,100,0,0,0,,\n`, 'jobs.csv');
    expect(jobs[0]).toMatchObject({ durationMs: 1500, share: 3 });
    expect(jobs[1]).not.toHaveProperty('durationMs');
    expect(jobs[1]).not.toHaveProperty('share');
    expect(parseTrace(formatTraceCsv(jobs))).toEqual(jobs);
    expect(() => parseTrace(`${HEADER},share\nz,0,1,10,0,0,0,0\n`, 'jobs.csv')).toThrow('jobs.csv line 2: share is "0"; expected a number above 0');
  });

  it('reads columns in any order, and a JSON list of the same objects', () => {
    const csv = parseTrace('priority,name,iterations,iterationMs,arrivalS,ephemeralBytes,persistentBytes\n1,x,3,10,0,2KiB,0\n');
    const json = parseTrace(JSON.stringify([{ name: 'x', arrivalS: 0, iterations: 3, iterationMs: 10, persistentBytes: 0, ephemeralBytes: '2KiB', priority: 1 }]));
    expect(csv).toEqual(json);
    expect(json[0]).toMatchObject({ ephemeralBytes: 2048, priority: 1, gapMs: 0 });
  });

  it('names the line, the column and what it expected', () => {
    const bad = (row: string) => () => parseTrace(`${HEADER}\nok,0,1,10,0,0,0\n${row}\n`, 'jobs.csv');
    expect(bad('b,0,1.5,10,0,0,0')).toThrow('jobs.csv line 3: iterations is "1.5"; expected a whole number of at least 1');
    expect(bad('b,-1,1,10,0,0,0')).toThrow('jobs.csv line 3: arrivalS is "-1"; expected a number of at least 0');
    expect(bad('b,0,1,0,0,0,0')).toThrow('jobs.csv line 3: iterationMs is "0"; expected a number above 0');
    expect(bad('b,0,1,10,lots,0,0')).toThrow(/^jobs.csv line 3: persistentBytes: invalid size "lots": expected a size such as 4096/);
    expect(bad('b,0,1,10,0,0')).toThrow('jobs.csv line 3: 6 fields where the header has 7');
    expect(bad(',0,1,10,0,0,0')).toThrow('jobs.csv line 3: name is empty');
    expect(bad('ok,1,1,10,0,0,0')).toThrow('jobs.csv line 3: the name "ok" is taken (line 2); names must be unique');
    expect(() => parseTrace('name,arrivalS,iterations\nx,0,1\n', 'jobs.csv')).toThrow('jobs.csv line 1: missing column iterationMs, persistentBytes, ephemeralBytes, priority');
    expect(() => parseTrace(`${HEADER},speed\n`, 'jobs.csv')).toThrow('jobs.csv line 1: unknown column "speed"; the columns are');
    expect(() => parseTrace(`${HEADER}\n`, 'jobs.csv')).toThrow('jobs.csv: no jobs');
    expect(() => parseTrace('# nothing\n', 'jobs.csv')).toThrow('jobs.csv: no header; a trace starts with the line name,arrivalS,');
  });

  it('names the JSON entry and its job', () => {
    const job = { name: 'j', arrivalS: 0, iterations: 2, iterationMs: 5, persistentBytes: 0, ephemeralBytes: 0, priority: 0 };
    expect(() => parseTrace('[{"name": 1,', 'jobs.json')).toThrow(/^jobs.json: not valid JSON/);
    expect(() => parseTrace('{"jobs": []}', 'jobs.json')).toThrow('jobs.json: a JSON trace is a list of jobs');
    expect(() => parseTrace(JSON.stringify([job, { ...job, name: 'k', iterations: 0 }]), 'jobs.json'))
      .toThrow('jobs.json job 2 ("k"): iterations is 0; expected a whole number of at least 1');
    expect(() => parseTrace(JSON.stringify([{ ...job, iterations: null }]), 'jobs.json')).toThrow('jobs.json job 1: iterations is null; expected a number or a string');
    expect(() => parseTrace(JSON.stringify([{ ...job, persistentBytes: 1.5 }]), 'jobs.json')).toThrow('persistentBytes is 1.5; expected a whole number of bytes');
    expect(() => parseTrace(JSON.stringify([job, job]), 'jobs.json')).toThrow('jobs.json job 2 ("j"): the name "j" is taken (job 1 ("j")); names must be unique');
  });
});
