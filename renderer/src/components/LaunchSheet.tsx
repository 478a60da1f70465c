/**
 * The launch sheet: a modal dialog for starting a job from a file chosen here
 * or dropped on the window, or one of the shipped examples in one click. The
 * file's text is uploaded with `uploadJob` and the returned path launched with
 * `launchJob`, which works the same in a browser and in the desktop app. Escape or Cancel closes it; focus stays
 * inside while it is open and returns where it was after.
 */
import { useEffect, useRef, type FormEvent, type KeyboardEvent, type ReactElement } from 'react';
import { formatBytes } from '../format.js';
import { useCommands, usePanel } from '../store/hooks.js';
import { isJobFileName } from '../store/launchRequest.js';
import { CloseIcon, UploadIcon } from './icons.js';

const FOCUSABLE = 'button:not([disabled]), input:not([disabled]), select, textarea, [tabindex]:not([tabindex="-1"])';

/** Keeps Tab and Shift+Tab cycling inside `container`. */
function trapTab(event: KeyboardEvent<HTMLElement>, container: HTMLElement): void {
  if (event.key !== 'Tab') return;
  const items = [...container.querySelectorAll<HTMLElement>(FOCUSABLE)];
  if (items.length === 0) return;
  const first = items[0];
  const last = items[items.length - 1];
  if (event.shiftKey && document.activeElement === first) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && document.activeElement === last) {
    event.preventDefault();
    first.focus();
  }
}

/** The sheet; renders nothing while closed. */
export function LaunchSheet(): ReactElement | null {
  const launch = usePanel((state) => state.launch);
  const updateDraft = usePanel((state) => state.updateDraft);
  const closeLaunch = usePanel((state) => state.closeLaunch);
  const setLaunchStatus = usePanel((state) => state.setLaunchStatus);
  const examples = usePanel((state) => state.examples);
  const commands = useCommands();
  const dialogRef = useRef<HTMLDivElement>(null);
  const firstFieldRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (launch.open) void commands.loadExamples();
  }, [launch.open, commands]);

  useEffect(() => {
    if (!launch.open) return;
    const previous = document.activeElement as HTMLElement | null;
    firstFieldRef.current?.focus();
    return () => previous?.focus?.();
  }, [launch.open]);

  if (!launch.open) return null;
  const { draft, submitting, error } = launch;

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void commands.launch();
  };

  return (
    <div className="sheet-backdrop" onMouseDown={(event) => { if (event.target === event.currentTarget && !submitting) closeLaunch(); }}>
      <div
        ref={dialogRef}
        className="sheet"
        role="dialog"
        aria-modal="true"
        aria-labelledby="launch-title"
        aria-describedby="launch-help"
        onKeyDown={(event) => {
          if (event.key === 'Escape' && !submitting) closeLaunch();
          if (dialogRef.current) trapTab(event, dialogRef.current);
        }}
      >
        <form onSubmit={onSubmit} noValidate>
          <header className="sheet-header">
            <h2 id="launch-title">Launch a job</h2>
            <button type="button" className="icon-button" aria-label="Close" onClick={closeLaunch} disabled={submitting}><CloseIcon /></button>
          </header>
          <p id="launch-help" className="muted sheet-help">
            An ES module that uses WebGPU (<code>navigator.gpu</code>), as <code>salus run</code> would run it.
          </p>

          {examples && examples.length > 0 ? (
            <section className="example-jobs" aria-labelledby="examples-title">
              <h3 id="examples-title">Run an example</h3>
              <ul>
                {examples.map((example) => (
                  <li key={example.file}>
                    <button
                      type="button"
                      className="example-job"
                      disabled={submitting}
                      aria-label={`Run example ${example.name}`}
                      onClick={() => void commands.launchExample(example)}
                    >
                      <strong className="mono">{example.name}</strong>
                      <span className="muted">{example.description}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          ) : null}

          <div className={`file-field${draft.file ? ' has-file' : ''}`}>
            <UploadIcon />
            <div className="file-field-text">
              {draft.file ? (
                <><strong>{draft.file.name}</strong> <span className="muted">{formatBytes(draft.file.size)}</span></>
              ) : <span className="muted">Drop a .js or .mjs file on the window, or choose one.</span>}
            </div>
            <label className="button secondary">
              {draft.file ? 'Change…' : 'Choose file…'}
              <input
                ref={firstFieldRef}
                className="visually-hidden"
                type="file"
                accept=".js,.mjs,text/javascript"
                aria-label="Job file"
                onChange={(event) => {
                  const file = event.target.files?.[0];
                  if (!file) return;
                  if (isJobFileName(file.name)) updateDraft({ file });
                  else setLaunchStatus({ submitting: false, error: `${file.name} is not a .js or .mjs file.` });
                }}
              />
            </label>
          </div>

          <div className="form-grid">
            <label className="form-field wide">
              <span>Name</span>
              <input type="text" value={draft.name} placeholder="named after the file" onChange={(event) => updateDraft({ name: event.target.value })} />
            </label>
            <label className="form-field">
              <span>Priority</span>
              <input type="number" step={1} value={draft.priority} onChange={(event) => updateDraft({ priority: event.target.value })} />
            </label>
            <label className="form-field">
              <span>Iterations</span>
              <input type="number" min={1} step={1} value={draft.iterations} placeholder="unknown" onChange={(event) => updateDraft({ iterations: event.target.value })} />
            </label>
            <label className="form-field wide">
              <span>Arguments</span>
              <input type="text" className="mono" value={draft.args} placeholder="--epochs 5 --lr 0.01" onChange={(event) => updateDraft({ args: event.target.value })} />
            </label>
          </div>

          {error ? <p className="inline-error" role="alert">{error}</p> : null}

          <footer className="sheet-footer">
            <button type="button" className="button secondary" onClick={closeLaunch} disabled={submitting}>Cancel</button>
            <button type="submit" className="button primary" disabled={submitting || !draft.file} aria-busy={submitting}>
              Launch
            </button>
          </footer>
        </form>
      </div>
    </div>
  );
}
