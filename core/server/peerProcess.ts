/**
 * Which process is on the other end of a job's socket, learned from the OS and
 * never from the job: a job's hello may name any pid, and `salus kill` must not
 * become a way to signal someone else's process.
 *
 * Node has no SO_PEERCRED. On Linux the service reads its own end's inode from
 * `/proc/self/fd`, asks `ss -xp` (iroute2, which reads the kernel's sock_diag)
 * for that socket's peer inode and the processes holding it, and — when it is
 * time to signal — confirms in `/proc/<pid>/fd` that each process still holds
 * that very socket, so a pid reused since is never signalled. Elsewhere, or
 * without `ss`, nothing is verified and a kill ends the job by its socket alone.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';

/** How long `ss` may take before the peer counts as unverifiable. */
const SS_TIMEOUT_MS = 2000;
/** Largest `ss` listing read (a machine with very many sockets). */
const SS_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** The peer's socket and the processes that held it when the connection was identified. */
export interface PeerSocket {
  /** Inode of the peer's end of the connection. */
  inode: number;
  pids: number[];
}

/** The inode of a socket's file descriptor in this process, or null where it cannot be read. */
function ownInode(socket: Socket): number | null {
  // `_handle.fd` is libuv's descriptor for the connection (not a public API; absent on Windows).
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return null;
  try {
    return socketInode(readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return null;
  }
}

function socketInode(link: string): number | null {
  const match = /^socket:\[(\d+)\]$/.exec(link);
  return match ? Number(match[1]) : null;
}

/**
 * Parses `ss -xpnH` lines: `… LOCAL_ADDR LOCAL_INODE PEER_ADDR PEER_INODE [users:((…,pid=N,fd=M),…)]`.
 * Returns, for each local inode, its peer inode and the pids holding it.
 */
export function parseUnixSockets(listing: string): Map<number, { peer: number; pids: number[] }> {
  const sockets = new Map<number, { peer: number; pids: number[] }>();
  for (const line of listing.split('\n')) {
    const match = /\s(\d+)\s+\S+\s+(\d+)\s*(users:\(.*\))?\s*$/.exec(line);
    if (!match) continue;
    const pids = [...(match[3] ?? '').matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    sockets.set(Number(match[1]), { peer: Number(match[2]), pids: [...new Set(pids)] });
  }
  return sockets;
}

/** Connections waiting to be identified: their own inode, and who waits for the answer. */
let waiting: { own: number; resolve: (peer: PeerSocket | null) => void }[] = [];
let listing = false;

/**
 * Runs `ss` for everyone waiting, one run at a time: a burst of connections
 * costs one or two runs, not one process each (a client must not be able to
 * make the service fork at will).
 */
function listForWaiting(): void {
  if (listing || waiting.length === 0) return;
  listing = true;
  const batch = waiting;
  waiting = [];
  execFile('ss', ['-xpnH'], { timeout: SS_TIMEOUT_MS, maxBuffer: SS_MAX_OUTPUT_BYTES }, (error, stdout) => {
    const sockets = error ? null : parseUnixSockets(stdout);
    for (const { own, resolve } of batch) {
      const peer = sockets?.get(own)?.peer;
      const holders = peer === undefined ? undefined : sockets?.get(peer)?.pids.filter((pid) => pid !== process.pid);
      resolve(peer !== undefined && holders?.length ? { inode: peer, pids: holders } : null);
    }
    listing = false;
    listForWaiting();
  });
}

/**
 * Identifies the process at the other end of `socket` (a connection accepted on
 * the service's Unix socket). Resolves with null when the OS cannot say.
 */
export function identifyPeer(socket: Socket): Promise<PeerSocket | null> {
  const own = process.platform === 'linux' ? ownInode(socket) : null;
  if (own === null) return Promise.resolve(null);
  return new Promise((resolve) => {
    waiting.push({ own, resolve });
    listForWaiting();
  });
}

/**
 * The job's process as the OS names it: its claim when that process holds the
 * socket, else the one process that does; null when the OS cannot say (or
 * several processes hold it and none is the claimed one).
 */
export function peerPid(peer: PeerSocket | null, claimedPid: number | null): number | null {
  if (!peer) return null;
  if (claimedPid !== null && peer.pids.includes(claimedPid)) return claimedPid;
  return peer.pids.length === 1 ? peer.pids[0] : null;
}

/** Whether process `pid` holds socket `inode` now (read from `/proc/<pid>/fd`). */
export function holdsSocket(pid: number, inode: number): boolean {
  const wanted = `socket:[${inode}]`;
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === wanted) return true;
      } catch {
        // Closed meanwhile.
      }
    }
  } catch {
    // Gone, or not ours to read.
  }
  return false;
}

/**
 * The processes of a job that may be signalled: those the OS said hold its
 * socket and that still hold it now. When the job's own claim is among them,
 * only it (its children that inherited the socket end with it or on their own).
 */
export function verifiedPids(peer: PeerSocket | null, claimedPid: number | null): number[] {
  if (!peer) return [];
  const candidates = claimedPid !== null && peer.pids.includes(claimedPid) ? [claimedPid] : peer.pids;
  return candidates.filter((pid) => pid !== process.pid && holdsSocket(pid, peer.inode));
}

/** Sends `signal` to each of `pids` (verified ones); a process that exited meanwhile is skipped. */
export function signalProcesses(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
