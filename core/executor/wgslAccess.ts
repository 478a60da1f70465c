/**
 * What a WGSL module can do to each of its buffer bindings, read from its
 * source: enough to tell, soundly, which bound buffers a dispatch may read.
 * Every doubt answers `read`: reading is the safe assumption, because a buffer
 * wrongly thought unread could have its contents treated as dead.
 */

/** How a module may access one binding: `read` (it may read; it may also write), or `write` (it may write, provably never reads). */
export type BindingAccess = 'read' | 'write';

/** Per `group:binding`, the module's access; null when a binding attribute is not a plain number (then treat every binding as read). */
export type ModuleAccess = ReadonlyMap<string, BindingAccess> | null;

/** Removes `//` and (nested) `/* *\/` comments, keeping offsets of the rest irrelevant. */
export function stripComments(code: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const two = code.slice(i, i + 2);
    if (depth === 0 && two === '//') {
      while (i < code.length && code[i] !== '\n') i++;
      out += '\n';
    } else if (two === '/*') {
      depth++;
      i++;
    } else if (depth > 0 && two === '*/') {
      depth--;
      i++;
      out += ' ';
    } else if (depth === 0) {
      out += code[i];
    }
  }
  return out;
}

// `@group(G) @binding(B) var<space[, mode]> name` with the two attributes in either order.
const DECLARATION =
  /((?:@\s*(?:group|binding)\s*\(\s*[^)]*\)\s*){2})var\s*<\s*(storage|uniform)\s*(?:,\s*(read_write|read|write)\s*)?>\s*([A-Za-z_][A-Za-z0-9_]*)/g;
const ATTRIBUTE = /@\s*(group|binding)\s*\(\s*([^)]*?)\s*\)/g;
const ANY_BINDING = /@\s*binding\s*\(/g;

/**
 * Whether every use of `name` in `code` (its declaration at `declaredAt` aside) is the
 * target of a plain assignment — `name = …`, `name[…] = …`, `name.f[…] = …` — so the
 * module never reads it (`arrayLength(&name)` reads only its size). Compound assignments, increments, other pointers,
 * function arguments and any other use count as reads.
 */
export function onlyAssigned(code: string, name: string, declaredAt: number): boolean {
  const use = new RegExp(`(?<![A-Za-z0-9_.])${name}(?![A-Za-z0-9_])`, 'g');
  for (const match of code.matchAll(use)) {
    if (match.index === declaredAt) continue;
    // arrayLength(&name) reads the buffer's size, not its contents.
    if (/arrayLength\s*\(\s*&\s*$/.test(code.slice(Math.max(0, match.index - 40), match.index)) && /^\s*\)/.test(code.slice(match.index + name.length))) continue;
    let at = match.index + name.length;
    for (;;) {
      while (/\s/.test(code[at] ?? '')) at++;
      if (code[at] === '[') {
        let depth = 0;
        for (; at < code.length; at++) {
          if (code[at] === '[') depth++;
          else if (code[at] === ']' && --depth === 0) break;
        }
        at++;
      } else if (code[at] === '.' && /[A-Za-z_]/.test(code[at + 1] ?? '')) {
        at++;
        while (/[A-Za-z0-9_]/.test(code[at] ?? '')) at++;
      } else {
        break;
      }
    }
    if (code[at] !== '=' || code[at + 1] === '=') return false;
  }
  return true;
}

/**
 * The module's buffer bindings and how it may access them. `var<uniform>` and
 * `var<storage>` / `var<storage, read>` are reads; `var<storage, read_write>` is a
 * read unless every use of it is an assignment's target (then `write`). A binding
 * the module does not declare is absent (callers treat absence as `read`).
 */
export function moduleAccess(source: string): ModuleAccess {
  const code = stripComments(source);
  const found = new Map<string, BindingAccess>();
  let declared = 0;
  for (const match of code.matchAll(DECLARATION)) {
    const attributes = new Map<string, string>();
    for (const [, key, value] of match[1].matchAll(ATTRIBUTE)) attributes.set(key, value);
    const group = attributes.get('group');
    const binding = attributes.get('binding');
    if (!group || !binding || !/^\d+$/.test(group) || !/^\d+$/.test(binding)) return null;
    const name = match[4];
    const nameAt = match.index + match[0].length - name.length;
    const writable = match[2] === 'storage' && (match[3] === 'read_write' || match[3] === 'write');
    found.set(`${Number(group)}:${Number(binding)}`, writable && onlyAssigned(code, name, nameAt) ? 'write' : 'read');
    declared++;
  }
  // A binding we could not parse (an override or const expression, another spelling) might be read: trust nothing.
  if ([...code.matchAll(ANY_BINDING)].length !== declared) return null;
  return found;
}
