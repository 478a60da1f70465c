/**
 * A stable, distinct colour per job, shared by every view (queue, memory map,
 * charts). Colours come from a palette of twelve chosen to stay apart from
 * each other and readable on both themes. A job keeps its slot for the life of
 * the page; a new job takes its hash's preferred slot, or the least used one if
 * that is taken, so up to twelve jobs never share a colour. The store assigns
 * slots in the service's job order, so a reload shows the same colours.
 */

interface Swatch {
  color: string;
  /** Text colour readable on `color`. */
  ink: string;
}

const DARK_INK = '#14171c';
const LIGHT_INK = '#ffffff';

const PALETTE: readonly Swatch[] = [
  { color: '#4c7ef3', ink: LIGHT_INK }, // blue
  { color: '#f08c2e', ink: DARK_INK }, // orange
  { color: '#2fb46e', ink: LIGHT_INK }, // green
  { color: '#e5484d', ink: LIGHT_INK }, // red
  { color: '#9b6cf0', ink: LIGHT_INK }, // violet
  { color: '#e6b422', ink: DARK_INK }, // amber
  { color: '#1fb5c4', ink: DARK_INK }, // cyan
  { color: '#e35fb0', ink: LIGHT_INK }, // pink
  { color: '#8aa52c', ink: DARK_INK }, // olive
  { color: '#b0703f', ink: LIGHT_INK }, // copper
  { color: '#5f6fd6', ink: LIGHT_INK }, // indigo
  { color: '#3fa58c', ink: LIGHT_INK }, // teal
];

const slotOf = new Map<string, number>();
const useCount = new Array<number>(PALETTE.length).fill(0);

/** FNV-1a over the UTF-16 code units of `text`. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function slot(jobId: string): number {
  let assigned = slotOf.get(jobId);
  if (assigned !== undefined) return assigned;
  const preferred = hash(jobId) % PALETTE.length;
  const fewest = Math.min(...useCount);
  assigned = preferred;
  for (let step = 0; step < PALETTE.length; step += 1) {
    const candidate = (preferred + step) % PALETTE.length;
    if (useCount[candidate] === fewest) {
      assigned = candidate;
      break;
    }
  }
  slotOf.set(jobId, assigned);
  useCount[assigned] += 1;
  return assigned;
}

/** Gives each of `jobIds` its slot, in order (call with the service's job order). */
export function assignJobColors(jobIds: Iterable<string>): void {
  for (const id of jobIds) slot(id);
}

/** The job's colour, a CSS hex string (canvas charts take it too). */
export function jobColor(jobId: string): string {
  return PALETTE[slot(jobId)].color;
}

/** A text colour readable on `jobColor(jobId)`. */
export function jobInk(jobId: string): string {
  return PALETTE[slot(jobId)].ink;
}
