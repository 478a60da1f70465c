/**
 * The thin React layer over the store: a context carrying the store, the
 * commands and the host, and hooks that select narrowly so a component
 * re-renders only when what it shows changed.
 */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { Commands } from './commands.js';
import type { PanelState, PanelStore } from './panelStore.js';

/** What the components reach through context. */
export interface PanelContextValue {
  store: PanelStore;
  commands: Commands;
  /** Reconnects now; absent where the host manages the connection (Electron). */
  reconnect?: () => void;
}

/** Provides the store, commands and host to the components; null outside a provider. */
export const PanelContext = createContext<PanelContextValue | null>(null);

function usePanelContext(): PanelContextValue {
  const value = useContext(PanelContext);
  if (!value) throw new Error('Panel components must be rendered inside <PanelContext.Provider>.');
  return value;
}

/** A slice of the store's state; the component re-renders when `selector`'s result changes (`Object.is`). */
export function usePanel<T>(selector: (state: PanelState) => T): T {
  return useStore(usePanelContext().store, selector);
}

/** Like `usePanel`, for selectors that build arrays or objects: compared shallowly. */
export function usePanelShallow<T>(selector: (state: PanelState) => T): T {
  return useStore(usePanelContext().store, useShallow(selector));
}

/** The store itself, for code that subscribes outside renders (charts). */
export function usePanelStore(): PanelStore {
  return usePanelContext().store;
}

/** The commands that call the service. */
export function useCommands(): Commands {
  return usePanelContext().commands;
}

/** The host's reconnect, when it has one. */
export function useReconnect(): (() => void) | undefined {
  return usePanelContext().reconnect;
}
