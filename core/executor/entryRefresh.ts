/**
 * What a session's object table asks before it hands out an entry whose real object may be stale
 * (objects.ts's EntryRefresh): a discarded buffer is allocated again (discard.ts), a bind group on a
 * buffer that moved is made again (residency.ts's BindGroupSources).
 *
 * A class, not closures made per session: ObjectTable.get is inlined into every hot handler, and optimised
 * code that inlined one session's closure was thrown away when the next job came (its call target changed,
 * or died with the session), so every new job re-optimised the replay path.
 */
import { reviveBuffer, type DiscardContext } from './discard.js';
import type { BindGroupEntry, BufferEntry, EntryRefresh } from './objects.js';
import type { BindGroupSources } from './residency.js';

export class SessionRefresh implements EntryRefresh {
  constructor(private readonly session: DiscardContext, private readonly sources: BindGroupSources) {}

  buffer(entry: BufferEntry): void {
    reviveBuffer(this.session, entry);
  }

  bindGroup(id: number, entry: BindGroupEntry): void {
    this.sources.refresh(id, entry, this.session.device, (buffer) => this.buffer(buffer));
  }
}
