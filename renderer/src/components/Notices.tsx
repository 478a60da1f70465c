/** Failed requests, as dismissible notices in a corner; each leaves by itself after a while. */
import { useEffect, type ReactElement } from 'react';
import { usePanel } from '../store/hooks.js';
import type { Notice } from '../store/uiSlice.js';
import { CloseIcon } from './icons.js';

const NOTICE_MS = 8000;

function NoticeItem({ notice }: { notice: Notice }): ReactElement {
  const dismiss = usePanel((state) => state.dismissNotice);
  useEffect(() => {
    const timer = setTimeout(() => dismiss(notice.id), NOTICE_MS);
    return () => clearTimeout(timer);
  }, [dismiss, notice.id]);
  return (
    <li className={`notice notice-${notice.tone}`} role={notice.tone === 'error' ? 'alert' : 'status'}>
      <p>{notice.text}</p>
      <button type="button" className="icon-button" aria-label="Dismiss" onClick={() => dismiss(notice.id)}><CloseIcon /></button>
    </li>
  );
}

/** The notice stack; empty most of the time. */
export function Notices(): ReactElement {
  const notices = usePanel((state) => state.notices);
  return (
    <ul className="notices" aria-label="Notices">
      {notices.map((notice) => <NoticeItem key={notice.id} notice={notice} />)}
    </ul>
  );
}
