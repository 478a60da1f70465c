/**
 * Reading `lsof -n -P -U -F pfdn` for the process at the other end of a job's socket on macOS. The listing
 * below follows lsof's field output on macOS (a socket's kernel address in `d`, a connected peer's as `->0x…`
 * in `n`); it was written from lsof's documented format, not captured on a Mac.
 */
import { describe, expect, it } from 'vitest';
import { lsofPeerOf, parseLsofUnixSockets } from '../../../core/server/peerProcessMac.js';

const SERVICE = 412;
const LISTING = [
  `p${SERVICE}`,
  'fcwd', 'n/Users/me',
  'f19', 'd0x3E2C1A0B5D6E7F01', 'n/Users/me/Library/Caches/salus/salus.sock',
  'f23', 'd0x3e2c1a0b5d6e8a11', 'n->0x3e2c1a0b5d6e9b22',
  'f24', 'd0x3e2c1a0b5d6e8c33', 'n/Users/me/Library/Caches/salus/salus.sock ->0x3e2c1a0b5d6ead44',
  'f25', 'd0x3e2c1a0b5d6e8e55', 'n->0x3e2c1a0b5d6eff66',
  // The job: its socket, held twice (a dup, and by a child that inherited it).
  'p977', 'f20', 'd0x3e2c1a0b5d6e9b22', 'n->0x3e2c1a0b5d6e8a11', 'f21', 'd0x3e2c1a0b5d6e9b22', 'n->0x3e2c1a0b5d6e8a11',
  'p978', 'ftxt', 'n/usr/local/bin/node', 'f20', 'd0x3e2c1a0b5d6e9b22', 'n->0x3e2c1a0b5d6e8a11',
  // A control client (salus jobs) on the service's fd 24.
  'p1200', 'f18', 'd0x3e2c1a0b5d6ead44', 'n->0x3e2c1a0b5d6e8c33',
  'p1300', 'f3', 'dgarbage', 'n->0x1',
  '',
].join('\n');

describe('parseLsofUnixSockets', () => {
  it('reads each socket\'s holder, descriptor, address and peer, and skips what is not a numbered socket', () => {
    const sockets = parseLsofUnixSockets(LISTING);
    expect(sockets.filter((s) => s.pid === SERVICE)).toEqual([
      { pid: SERVICE, fd: 19, address: '0x3e2c1a0b5d6e7f01', peer: null },
      { pid: SERVICE, fd: 23, address: '0x3e2c1a0b5d6e8a11', peer: '0x3e2c1a0b5d6e9b22' },
      { pid: SERVICE, fd: 24, address: '0x3e2c1a0b5d6e8c33', peer: '0x3e2c1a0b5d6ead44' },
      { pid: SERVICE, fd: 25, address: '0x3e2c1a0b5d6e8e55', peer: '0x3e2c1a0b5d6eff66' },
    ]);
    expect(sockets.filter((s) => s.pid === 1300)).toEqual([]);
    expect(parseLsofUnixSockets('')).toEqual([]);
  });
});

describe('lsofPeerOf', () => {
  const sockets = parseLsofUnixSockets(LISTING);

  it('names every process that holds the peer of the service\'s descriptor, once each', () => {
    expect(lsofPeerOf(sockets, SERVICE, 23)).toEqual({ socket: '0x3e2c1a0b5d6e9b22', pids: [977, 978] });
    expect(lsofPeerOf(sockets, SERVICE, 24)).toEqual({ socket: '0x3e2c1a0b5d6ead44', pids: [1200] });
  });

  it('says nothing for a listening socket, a peer nobody visible holds, or a descriptor not listed', () => {
    expect(lsofPeerOf(sockets, SERVICE, 19)).toBeNull();
    expect(lsofPeerOf(sockets, SERVICE, 25)).toBeNull();
    expect(lsofPeerOf(sockets, SERVICE, 99)).toBeNull();
    expect(lsofPeerOf(sockets, 555, 23)).toBeNull();
  });
});
