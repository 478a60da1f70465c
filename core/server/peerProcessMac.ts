/**
 * The process at the other end of a Unix socket on macOS, from `lsof`: Node
 * has no getpeereid, but `lsof -U` names each Unix socket by its kernel address
 * and a connected one's peer by the peer's address (`->0x…`). The service finds
 * its own end by its pid and descriptor, the peer's address there, and the
 * processes holding a socket at that address. At signal time `lsof -p` confirms
 * the process still holds it. Untested on a real Mac here; the parsing is tested
 * on recorded output (test/unit/server/peerProcessMac.test.ts).
 */
import { execFileSync } from 'node:child_process';
import type { Socket } from 'node:net';
import { batchedListing, parsedOnce, socketFd } from './peerListing.js';
import type { PeerSocket } from './peerProcess.js';

/** How long the check before a signal may block the service. */
const HOLDS_TIMEOUT_MS = 2000;

/** One Unix socket in `lsof -F pfdn` output: who holds it, its kernel address, and its peer's when connected. */
export interface LsofSocket {
  pid: number;
  fd: number;
  address: string;
  peer: string | null;
}

/**
 * Parses `lsof -n -P -U -F pfdn`: a `p<pid>` line starts a process, `f<fd>` a file of it, `d<0x…>` is the
 * socket's address, `n<name>` its name (a path, or `->0x…` naming the peer). Files without a numeric
 * descriptor or an address are skipped.
 */
export function parseLsofUnixSockets(listing: string): LsofSocket[] {
  const sockets: LsofSocket[] = [];
  let pid = NaN;
  let file: LsofSocket | null = null;
  const finish = () => {
    if (file && Number.isInteger(file.fd) && file.address) sockets.push(file);
    file = null;
  };
  for (const line of listing.split('\n')) {
    const field = line[0];
    const value = line.slice(1).trim();
    if (field === 'p') {
      finish();
      pid = Number(value);
    } else if (field === 'f') {
      finish();
      file = { pid, fd: /^\d+$/.test(value) ? Number(value) : NaN, address: '', peer: null };
    } else if (file && field === 'd' && /^0x[0-9a-f]+$/i.test(value)) {
      file.address = value.toLowerCase();
    } else if (file && field === 'n') {
      file.peer = /->\s*(0x[0-9a-f]+)/i.exec(value)?.[1].toLowerCase() ?? null;
    }
  }
  finish();
  return sockets.filter((socket) => Number.isInteger(socket.pid));
}

/** From parsed sockets: the peer of process `pid`'s descriptor `fd`, and who holds it (never `pid` itself). */
export function lsofPeerOf(sockets: readonly LsofSocket[], pid: number, fd: number): PeerSocket | null {
  const own = sockets.find((socket) => socket.pid === pid && socket.fd === fd);
  if (!own?.peer) return null;
  const pids = [...new Set(sockets.filter((socket) => socket.address === own.peer && socket.pid !== pid).map((socket) => socket.pid))];
  return pids.length > 0 ? { socket: own.peer, pids } : null;
}

const listUnixSockets = batchedListing('lsof', () => ['-n', '-P', '-U', '-F', 'pfdn']);
const parseListing = parsedOnce(parseLsofUnixSockets);

/** Identifies the peer of a connection accepted on the service's Unix socket; null when `lsof` cannot say. */
export async function identifyMacPeer(socket: Socket): Promise<PeerSocket | null> {
  const fd = socketFd(socket);
  if (fd === null) return null;
  const listing = await listUnixSockets();
  return listing === null ? null : lsofPeerOf(parseListing(listing.output), process.pid, fd);
}

/** Whether process `pid` holds the Unix socket at kernel `address` now (`lsof -a -p PID -U`); false when it cannot tell. */
export function macProcessHolds(pid: number, address: string): boolean {
  try {
    const listing = execFileSync('lsof', ['-n', '-P', '-a', '-p', String(pid), '-U', '-F', 'pfdn'], { timeout: HOLDS_TIMEOUT_MS, encoding: 'utf8' });
    return parseLsofUnixSockets(listing).some((socket) => socket.pid === pid && socket.address === address);
  } catch {
    // lsof exits 1 when the process holds no Unix socket (or is gone); missing or slow counts as unverified.
    return false;
  }
}
