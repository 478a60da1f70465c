/**
 * Window-wide drag and drop: dragging files anywhere over the panel shows a
 * drop target; dropping a .js or .mjs file opens the launch sheet with it.
 */
import { useEffect, useState, type ReactElement } from 'react';
import { usePanel } from '../store/hooks.js';
import { isJobFileName } from '../store/launchRequest.js';
import { UploadIcon } from './icons.js';

function carriesFiles(event: DragEvent): boolean {
  return event.dataTransfer?.types.includes('Files') ?? false;
}

/** Listens on `window` while mounted; renders the overlay only during a drag. */
export function DropOverlay(): ReactElement | null {
  const openLaunch = usePanel((state) => state.openLaunch);
  const pushNotice = usePanel((state) => state.pushNotice);
  const [dragging, setDragging] = useState(false);

  useEffect(() => {
    // dragenter/dragleave fire for every child crossed; count them to know when the drag left the window.
    let depth = 0;
    const onEnter = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      depth += 1;
      setDragging(true);
    };
    const onOver = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault(); // Without this the browser would open the file instead of dropping it here.
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    };
    const onLeave = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const onDrop = (event: DragEvent) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth = 0;
      setDragging(false);
      const file = event.dataTransfer?.files[0];
      if (!file) return;
      if (isJobFileName(file.name)) openLaunch({ file });
      else pushNotice('error', `${file.name} is not a job file: drop a .js or .mjs ES module.`);
    };
    window.addEventListener('dragenter', onEnter);
    window.addEventListener('dragover', onOver);
    window.addEventListener('dragleave', onLeave);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragenter', onEnter);
      window.removeEventListener('dragover', onOver);
      window.removeEventListener('dragleave', onLeave);
      window.removeEventListener('drop', onDrop);
    };
  }, [openLaunch, pushNotice]);

  if (!dragging) return null;
  return (
    <div className="drop-overlay" aria-hidden="true">
      <div className="drop-target">
        <UploadIcon />
        <strong>Drop to launch</strong>
        <span>a .js or .mjs job file</span>
      </div>
    </div>
  );
}
