/**
 * A strict parser of Prometheus's text exposition format (version 0.0.4), for
 * tests that scrape `/metrics`: `# HELP` and `# TYPE` lines, samples
 * `name{label="value",…} value [timestamp]` with the format's escapes, and
 * histogram and summary samples (`_bucket`, `_sum`, `_count`) grouped into
 * their family. Anything else throws with the line, so a malformed exposition
 * fails the test. (parse-prometheus-text-format 1.1.1 merges the series of a
 * labelled histogram into one and drops their labels, so it cannot check them.)
 */

/** One sample line. */
export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`… for histograms). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A metric family: its HELP, TYPE and samples. */
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SUFFIXES = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] } as const;

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`not a sample value '${text}' in: ${line}`);
  return value;
}

/** Parses `{a="1",b="x\"y"}` starting at `text[0] === '{'`; returns the labels and the rest. */
function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (text[i] !== '}') {
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i))?.[0];
    if (!name || text[i + name.length] !== '=' || text[i + name.length + 1] !== '"') throw new Error(`bad label at '${text.slice(i)}' in: ${line}`);
    i += name.length + 2;
    let value = '';
    for (; text[i] !== '"'; i++) {
      if (i >= text.length) throw new Error(`unterminated label value in: ${line}`);
      if (text[i] === '\\') {
        i++;
        const escaped = { n: '\n', '\\': '\\', '"': '"' }[text[i]];
        if (escaped === undefined) throw new Error(`bad escape '\\${text[i]}' in: ${line}`);
        value += escaped;
      } else {
        value += text[i];
      }
    }
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    labels[name] = value;
    i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`expected , or } at '${text.slice(i)}' in: ${line}`);
  }
  return { labels, rest: text.slice(i + 1) };
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  for (const [name, family] of families) {
    if (family.type !== 'histogram' && family.type !== 'summary') continue;
    if (SUFFIXES[family.type].some((suffix) => sampleName === name + suffix)) return family;
  }
  return undefined;
}

/** Parses an exposition into its families, by name. Throws on anything malformed or a sample without a TYPE. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const family = families.get(name) ?? { name, help: '', type: 'untyped' as const, samples: [] };
      if (kind === 'HELP') family.help = rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      else if (['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) family.type = rest as Family['type'];
      else throw new Error(`unknown type in: ${line}`);
      families.set(name, family);
      continue;
    }
    if (line.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (!name) throw new Error(`not a sample: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || parts.length < 1 || parts.length > 2) throw new Error(`expected ' value [timestamp]' in: ${line}`);
    const family = familyOf(name, families);
    if (!family) throw new Error(`sample before its # TYPE: ${line}`);
    family.samples.push({ name, labels, value: parseValue(parts[0], line) });
  }
  return families;
}
