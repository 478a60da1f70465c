/**
 * The Windows helper's output and how a connection is matched to its pipe instance. The helper runs only on
 * Windows (not here); the output below is in the format its C# writes, and the PowerShell command is checked for
 * its quoting.
 */
import { describe, expect, it } from 'vitest';
import { attributePipe, parsePipeClients, pipeClientsCommand, pipeName } from '../../../core/server/peerProcessWindows.js';

describe('parsePipeClients', () => {
  it('reads HANDLE CLIENT_PID lines after the helper\'s header, CRLF or not', () => {
    expect(parsePipeClients('salus-pipe-clients\r\n1234 8812\r\n1480 9100\r\n')).toEqual([
      { handle: '1234', pid: 8812 }, { handle: '1480', pid: 9100 },
    ]);
    expect(parsePipeClients('salus-pipe-clients\n')).toEqual([]);
    expect(parsePipeClients('salus-pipe-clients\n12 0\nnonsense\n16 40\n')).toEqual([{ handle: '16', pid: 40 }]);
  });

  it('is null for anything else (PowerShell\'s own errors, an empty output)', () => {
    expect(parsePipeClients('')).toBeNull();
    expect(parsePipeClients('Add-Type : Cannot add type.\r\n1234 8812\r\n')).toBeNull();
  });
});

describe('the helper\'s command', () => {
  it('names the pipe as the file system does, quoted for PowerShell', () => {
    expect(pipeName('\\\\.\\pipe\\salus-me')).toBe('salus-me');
    expect(pipeName('\\\\?\\pipe\\salus-me')).toBe('salus-me');
    const command = pipeClientsCommand(4242, "\\\\.\\pipe\\it's-salus");
    expect(command).toContain("[SalusPipeClients]::List(4242, 'it''s-salus', ");
    expect(command.startsWith("Add-Type -TypeDefinition '")).toBe(true);
  });
});

describe('attributePipe', () => {
  const listed = [{ handle: '100', pid: 7 }, { handle: '104', pid: 8 }, { handle: '108', pid: 9 }];

  it('gives a lone waiting connection the one instance no live connection holds', () => {
    expect(attributePipe(listed, new Set(['100', '104']), 1)).toEqual({ pid: 9, handle: '108' });
  });

  it('gives connections that arrived together the client their new instances share, without an instance', () => {
    const two = [{ handle: '100', pid: 7 }, { handle: '104', pid: 7 }];
    expect(attributePipe(two, new Set(), 2)).toEqual({ pid: 7, handle: null });
    expect(attributePipe(two, new Set(), 1)).toEqual({ pid: 7, handle: null });
  });

  it('says nothing when the new instances have different clients or there is none', () => {
    expect(attributePipe(listed, new Set(['100']), 1)).toBeNull();
    expect(attributePipe(listed, new Set(['100']), 2)).toBeNull();
    expect(attributePipe(listed, new Set(['100', '104', '108']), 1)).toBeNull();
    expect(attributePipe([], new Set(), 1)).toBeNull();
  });
});
