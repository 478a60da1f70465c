/**
 * Which process is on the other end of a job's socket, learned from the OS and
 * never from the job: a job's hello may name any pid, and `salus kill` must not
 * become a way to signal someone else's process.
 *
 * Node has no SO_PEERCRED. On Linux the service reads its own end's inode from
 * `/proc/self/fd`, asks `ss -xp` (iroute2, which reads the kernel's sock_diag)
 * for that socket's peer inode and the processes holding it, and — when it is
 * time to signal — confirms in `/proc/<pid>/fd` that each process still holds
 * that very socket, so a pid reused since is never signalled. macOS asks
 * `lsof` the same questions (peerProcessMac.ts), Windows asks the pipe for its
 * client process (peerProcessWindows.ts). Where the OS cannot say (another
 * platform, a tool missing or failing), nothing is verified and a kill ends the
 * job by its socket alone.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { batchedListing, parsedOnce, socketFd } from './peerListing.js';
import { identifyMacPeer, macProcessHolds } from './peerProcessMac.js';
import { identifyWindowsPeer } from './peerProcessWindows.js';

/** The peer's socket and the processes that held it when the connection was identified. */
export interface PeerSocket {
  /**
   * The peer's end of the connection as the OS names it: its inode (Linux), its kernel address (macOS), or the
   * service's handle of the pipe instance (Windows).
   */
  socket: string;
  pids: number[];
}

/** The inode of a socket's file descriptor in this process, or null where it cannot be read. */
function ownInode(socket: Socket): number | null {
  const fd = socketFd(socket);
  if (fd === null) return null;
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

const listUnixSockets = batchedListing('ss', () => ['-xpnH']);
const parseListing = parsedOnce(parseUnixSockets);

async function identifyLinuxPeer(socket: Socket): Promise<PeerSocket | null> {
  const own = ownInode(socket);
  if (own === null) return null;
  const listing = await listUnixSockets();
  const sockets = listing === null ? null : parseListing(listing.output);
  const peer = sockets?.get(own)?.peer;
  const holders = peer === undefined ? undefined : sockets?.get(peer)?.pids.filter((pid) => pid !== process.pid);
  return peer !== undefined && holders?.length ? { socket: String(peer), pids: holders } : null;
}

/**
 * Identifies the process at the other end of `socket`, a connection accepted at
 * `endpoint` (the service's socket path or pipe name). Resolves with null when
 * the OS cannot say.
 */
export function identifyPeer(socket: Socket, endpoint: string): Promise<PeerSocket | null> {
  if (process.platform === 'linux') return identifyLinuxPeer(socket);
  if (process.platform === 'darwin') return identifyMacPeer(socket);
  if (process.platform === 'win32') return identifyWindowsPeer(socket, endpoint);
  return Promise.resolve(null);
}

/**
 * Starts watching a connection just accepted at `endpoint`; the returned function identifies its peer (once,
 * whenever first asked). On Windows every connection is identified at once, control ones included: a pipe
 * instance is told from the others only by which connections were accepted when it appeared.
 */
export function watchPeer(socket: Socket, endpoint: string): () => Promise<PeerSocket | null> {
  let identified = process.platform === 'win32' ? identifyPeer(socket, endpoint) : null;
  return () => (identified ??= identifyPeer(socket, endpoint));
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

/**
 * Whether process `pid` holds the peer's socket now: read from `/proc/<pid>/fd` on Linux, asked of `lsof` on macOS.
 * On Windows the pipe's client process is known only as it was when identified (peerProcessWindows.ts).
 */
export function holdsSocket(pid: number, peer: PeerSocket): boolean {
  if (process.platform === 'darwin') return macProcessHolds(pid, peer.socket);
  if (process.platform === 'win32') return peer.pids.includes(pid);
  return linuxProcessHolds(pid, peer.socket);
}

function linuxProcessHolds(pid: number, inode: string): boolean {
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
  return candidates.filter((pid) => pid !== process.pid && holdsSocket(pid, peer));
}
