/**
 * Entry point: picks the host (`window.salus` or the bridge WebSocket), builds
 * the store, connects them, and renders the panel. In the dev server, `?demo`
 * runs against a simulated service instead.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'uplot/dist/uPlot.min.css';
import './styles/theme.css';
import './styles/layout.css';
import './styles/components.css';
import { App } from './components/App.js';
import { pickHost, type PanelHost } from './api/host.js';
import { createCommands } from './store/commands.js';
import { connectStore } from './store/connect.js';
import { PanelContext } from './store/hooks.js';
import { createPanelStore } from './store/panelStore.js';

async function chooseHost(): Promise<PanelHost> {
  if (import.meta.env.DEV && new URLSearchParams(location.search).has('demo')) {
    const { createDemoApi } = await import('./dev/demoApi.js');
    return { kind: 'preload', api: createDemoApi() };
  }
  return pickHost();
}

const host = await chooseHost();
const store = createPanelStore();
connectStore(store, host.api);
const commands = createCommands(host.api, store);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <PanelContext.Provider value={{ store, commands, reconnect: host.reconnect }}>
      <App />
    </PanelContext.Provider>
  </StrictMode>,
);
