/**
 * The panel's few icons, as inline SVG sized by the surrounding font and
 * coloured by `currentColor`. Decorative: the control that holds one carries
 * the accessible name.
 */
import type { ReactElement } from 'react';

function Icon({ children }: { children: ReactElement | ReactElement[] }): ReactElement {
  return (
    <svg className="icon" viewBox="0 0 16 16" width="1em" height="1em" aria-hidden="true" focusable="false">
      {children}
    </svg>
  );
}

/** Two bars. */
export function PauseIcon(): ReactElement {
  return <Icon><path d="M4.5 3h2v10h-2zM9.5 3h2v10h-2z" fill="currentColor" /></Icon>;
}

/** A right-pointing triangle. */
export function PlayIcon(): ReactElement {
  return <Icon><path d="M5 3l8 5-8 5z" fill="currentColor" /></Icon>;
}

/** A filled square: stop for good. */
export function StopIcon(): ReactElement {
  return <Icon><rect x="4" y="4" width="8" height="8" rx="1" fill="currentColor" /></Icon>;
}

/** A cross. */
export function CloseIcon(): ReactElement {
  return <Icon><path d="M4 4l8 8M12 4l-8 8" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" /></Icon>;
}

/** An arrow out of a tray. */
export function UploadIcon(): ReactElement {
  return (
    <Icon>
      <path d="M8 10.5V2.5M4.8 5.7L8 2.5l3.2 3.2" stroke="currentColor" strokeWidth="1.5" fill="none" strokeLinecap="round" strokeLinejoin="round" />
      <path d="M2.5 10v2.5a1 1 0 001 1h9a1 1 0 001-1V10" stroke="currentColor" strokeWidth="1.5" fill="none" strokeLinecap="round" />
    </Icon>
  );
}

/** A triangle with an exclamation mark. */
export function WarningIcon(): ReactElement {
  return (
    <Icon>
      <path d="M8 1.8l6.6 11.6H1.4z" fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinejoin="round" />
      <path d="M8 6.2v3.4" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
      <circle cx="8" cy="11.5" r=".9" fill="currentColor" />
    </Icon>
  );
}

/** A circular arrow. */
export function RefreshIcon(): ReactElement {
  return (
    <Icon>
      <path d="M13 8a5 5 0 11-1.5-3.6" stroke="currentColor" strokeWidth="1.5" fill="none" strokeLinecap="round" />
      <path d="M12 1.8v3h-3" stroke="currentColor" strokeWidth="1.5" fill="none" strokeLinecap="round" strokeLinejoin="round" />
    </Icon>
  );
}

/** The Salus mark: lanes of a chip, the middle one lit. */
export function SalusMark(): ReactElement {
  return (
    <svg className="salus-mark" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false">
      <rect x="2" y="2" width="20" height="20" rx="5" fill="var(--accent)" />
      <rect x="6" y="6.5" width="12" height="2.6" rx="1.3" fill="var(--accent-contrast)" opacity=".55" />
      <rect x="6" y="10.7" width="8" height="2.6" rx="1.3" fill="var(--accent-contrast)" />
      <rect x="6" y="14.9" width="10" height="2.6" rx="1.3" fill="var(--accent-contrast)" opacity=".55" />
    </svg>
  );
}
