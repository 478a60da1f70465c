/**
 * The client process of a connection on the service's named pipe, on Windows.
 * Node gives no access to a pipe's handle, so a PowerShell helper (C# through
 * Add-Type) duplicates the service's own handles, keeps the server ends of
 * instances of the service's pipe, and asks each for its client process
 * (GetNamedPipeClientProcessId). Which instance is which connection is told by
 * arrival: every connection is identified as it is accepted, and an instance
 * is attributed to a connection only when it is the one instance not already
 * attributed and that connection the only one waiting. When several
 * connections arrive together, they all get the client process their new
 * instances share, or, when those differ, none (unverified: a kill then
 * signals no one). Untested on a real Windows here; the parsing and the
 * attribution are tested as plain functions (test/unit/server/peerProcessWindows.test.ts).
 */
import type { Socket } from 'node:net';
import { batchedListing } from './peerListing.js';
import type { PeerSocket } from './peerProcess.js';

/** One connected instance of the service's pipe: the service's handle of its server end, and its client process. */
export interface PipeInstance {
  handle: string;
  pid: number;
}

/** Highest handle value tried in the service (handle values are multiples of 4; a service holds a few thousand). */
const MAX_HANDLE_VALUE = 0x40000;
/** PowerShell compiles the helper (Add-Type) on every run: seconds on a slow machine. */
const HELPER_TIMEOUT_MS = 20_000;

const HELPER = String.raw`
using System;
using System.Runtime.InteropServices;
using System.Text;
public static class SalusPipeClients {
  [DllImport("kernel32.dll", SetLastError = true)] static extern IntPtr OpenProcess(uint access, bool inherit, int pid);
  [DllImport("kernel32.dll", SetLastError = true)] static extern bool DuplicateHandle(IntPtr sourceProcess, IntPtr source, IntPtr targetProcess, out IntPtr target, uint access, bool inherit, uint options);
  [DllImport("kernel32.dll")] static extern IntPtr GetCurrentProcess();
  [DllImport("kernel32.dll")] static extern bool CloseHandle(IntPtr handle);
  [DllImport("kernel32.dll")] static extern uint GetFileType(IntPtr handle);
  [DllImport("kernel32.dll", SetLastError = true)] static extern bool GetNamedPipeInfo(IntPtr pipe, out uint flags, IntPtr outSize, IntPtr inSize, IntPtr maxInstances);
  [DllImport("kernel32.dll", SetLastError = true)] static extern bool GetNamedPipeClientProcessId(IntPtr pipe, out uint clientPid);
  [DllImport("kernel32.dll", SetLastError = true)] static extern bool GetFileInformationByHandleEx(IntPtr file, int infoClass, IntPtr info, uint size);
  public static string List(int servicePid, string pipeName, long maxHandle) {
    IntPtr service = OpenProcess(0x40 /* PROCESS_DUP_HANDLE */, false, servicePid);
    if (service == IntPtr.Zero) throw new Exception("OpenProcess failed: " + Marshal.GetLastWin32Error());
    StringBuilder output = new StringBuilder("salus-pipe-clients\n");
    IntPtr info = Marshal.AllocHGlobal(4096);
    try {
      for (long value = 4; value <= maxHandle; value += 4) {
        IntPtr copy;
        if (!DuplicateHandle(service, new IntPtr(value), GetCurrentProcess(), out copy, 0, false, 2 /* DUPLICATE_SAME_ACCESS */)) continue;
        try {
          uint flags, client;
          if (GetFileType(copy) != 3 /* FILE_TYPE_PIPE */) continue;
          if (!GetNamedPipeInfo(copy, out flags, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero) || (flags & 1 /* PIPE_SERVER_END */) == 0) continue;
          if (!GetNamedPipeClientProcessId(copy, out client) || client == 0) continue;
          if (!GetFileInformationByHandleEx(copy, 2 /* FileNameInfo */, info, 4096)) continue;
          string name = Marshal.PtrToStringUni(IntPtr.Add(info, 4), Marshal.ReadInt32(info) / 2);
          if (!string.Equals(name.TrimStart('\\'), pipeName, StringComparison.OrdinalIgnoreCase)) continue;
          output.Append(value).Append(' ').Append(client).Append('\n');
        } finally {
          CloseHandle(copy);
        }
      }
    } finally {
      Marshal.FreeHGlobal(info);
      CloseHandle(service);
    }
    return output.ToString();
  }
}`;

/** The pipe's name as the file system names it: `\\.\pipe\salus-me` is `salus-me`. */
export function pipeName(endpoint: string): string {
  return endpoint.replace(/^[\\/]{2}[.?][\\/]pipe[\\/]/i, '');
}

/** PowerShell's quoting of a string literal. */
const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The PowerShell command that lists the instances of pipe `endpoint` that process `servicePid` serves. */
export function pipeClientsCommand(servicePid: number, endpoint: string): string {
  return `Add-Type -TypeDefinition ${quoted(HELPER)}; [Console]::Out.Write([SalusPipeClients]::List(${servicePid}, ${quoted(pipeName(endpoint))}, ${MAX_HANDLE_VALUE}))`;
}

/** Parses the helper's output: a `salus-pipe-clients` line, then `HANDLE CLIENT_PID` per connected instance; null when it is not that. */
export function parsePipeClients(output: string): PipeInstance[] | null {
  const lines = output.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
  if (lines[0] !== 'salus-pipe-clients') return null;
  const instances: PipeInstance[] = [];
  for (const line of lines.slice(1)) {
    const match = /^(\d+) (\d+)$/.exec(line);
    if (match && Number(match[2]) > 0) instances.push({ handle: match[1], pid: Number(match[2]) });
  }
  return instances;
}

/**
 * Which client a connection identified from `listed` has. `attributed` holds the instances already known to be
 * other live connections'; `waiting` is how many connections this listing answers (this one included, each
 * accepted before the listing began, so each one's instance is in it). Answers the instance and its client when
 * exactly one instance is new and one connection waits; the client alone when every new instance has the same
 * one; else null.
 */
export function attributePipe(listed: readonly PipeInstance[], attributed: ReadonlySet<string>, waiting: number): { pid: number; handle: string | null } | null {
  const fresh = listed.filter((instance) => !attributed.has(instance.handle));
  if (fresh.length === 0) return null;
  if (fresh.length === 1 && waiting === 1) return { pid: fresh[0].pid, handle: fresh[0].handle };
  return fresh.every((instance) => instance.pid === fresh[0].pid) ? { pid: fresh[0].pid, handle: null } : null;
}

/** Instances known to belong to live connections of this service. */
const attributed = new Set<string>();
let listPipeClients: ReturnType<typeof batchedListing> | null = null;

/** Identifies the client process of a connection just accepted on pipe `endpoint`; null when Windows cannot say. */
export async function identifyWindowsPeer(socket: Socket, endpoint: string): Promise<PeerSocket | null> {
  // -EncodedCommand (UTF-16LE, base64): the script's quotes never meet command-line quoting.
  const encoded = Buffer.from(pipeClientsCommand(process.pid, endpoint), 'utf16le').toString('base64');
  listPipeClients ??= batchedListing('powershell.exe', () => ['-NoProfile', '-NonInteractive', '-EncodedCommand', encoded], HELPER_TIMEOUT_MS);
  const listing = await listPipeClients();
  const listed = listing === null ? null : parsePipeClients(listing.output);
  const found = listed === null || socket.destroyed ? null : attributePipe(listed, attributed, listing!.callers);
  if (!found) return null;
  if (found.handle !== null) {
    const handle = found.handle;
    attributed.add(handle);
    socket.once('close', () => attributed.delete(handle));
  }
  return { socket: found.handle ?? `pid ${found.pid}`, pids: [found.pid] };
}
