// What a tool call does, told from its tool and arguments, so it is shown that way: a file
// write as its path and content (and a diff against the file on disk), an edit as its diff, a
// command as a shell block with the agent's stated intent, anything else as its fields in the
// schema's order with their titles. The argument names are those real agents send (see
// /work/shared/AGENT-HOOKS.md): Claude Code's Write {file_path, content}, Edit {file_path,
// old_string, new_string, replace_all}, MultiEdit {file_path, edits}, Bash {command,
// description}; Codex's exec_command {cmd, justification} and apply_patch (a patch in its own
// format); Airlock's write_file {path, content} and run_command {command, cwd}; the hosted ACP
// agents' run_shell_command {command, description} (Qwen Code, Gemini CLI; AGENT-ACP.md).
import { diffText, withWords, type DiffLine } from './diff';

export type Field = { key: string; title: string; value: unknown };
export type Edit = { before: string; after: string; all: boolean };
export type PatchFile = { op: 'add' | 'update' | 'delete'; path: string; moveTo: string | null; lines: DiffLine[] };

export type CallView =
  | { kind: 'write'; path: string; content: string }
  | { kind: 'edit'; path: string; edits: Edit[] }
  | { kind: 'patch'; files: PatchFile[] }
  | { kind: 'command'; command: string; intent: string | null; cwd: string | null }
  | { kind: 'fields'; fields: Field[] };

type Args = Record<string, unknown>;

const PATH_KEYS = ['file_path', 'path', 'filePath', 'notebook_path'];
// Agents hosted over ACP name their tools their own way (Qwen Code's and Gemini CLI's
// run_shell_command and replace), or by the ACP kind alone (`execute`, `edit`: codex-acp).
const COMMAND_TOOLS = new Set(['run_command', 'bash', 'shell', 'exec_command', 'exec', 'local_shell', 'container.exec', 'run_shell_command', 'execute']);
const WRITE_TOOLS = new Set(['write_file', 'write', 'create_file']);
const EDIT_TOOLS = new Set(['edit', 'multiedit', 'edit_file', 'str_replace_editor', 'str_replace', 'replace']);
const PATCH_TOOLS = new Set(['apply_patch']);

function str(args: Args, ...keys: string[]): string | null {
  for (const key of keys) if (typeof args[key] === 'string') return args[key] as string;
  return null;
}

/** A command given as a string, or as an argv (Codex's older `shell` tool: ["bash", "-lc", "…"]). */
function commandOf(args: Args): string | null {
  const given = args.command ?? args.cmd;
  if (typeof given === 'string') return given;
  if (Array.isArray(given) && given.every((w) => typeof w === 'string')) {
    const argv = given as string[];
    if (argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0]) && /^-l?c$/.test(argv[1])) return argv[2];
    return argv.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
  }
  return null;
}

function editsOf(args: Args): Edit[] | null {
  const one = (e: unknown): Edit | null => {
    if (!e || typeof e !== 'object') return null;
    const o = e as Args;
    const before = str(o, 'old_string', 'oldText', 'old_str');
    const after = str(o, 'new_string', 'newText', 'new_str');
    return before !== null && after !== null ? { before, after, all: o.replace_all === true } : null;
  };
  if (Array.isArray(args.edits)) {
    const edits = args.edits.map(one);
    return edits.every((e) => e !== null) && edits.length > 0 ? (edits as Edit[]) : null;
  }
  const single = one(args);
  return single ? [single] : null;
}

/** What the call does, by its tool's name and the shape of its arguments. */
export function describeCall(tool: string, args: unknown, schema: unknown = null): CallView {
  const name = tool.toLowerCase();
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const a = args as Args;
    const path = str(a, ...PATH_KEYS);
    if (COMMAND_TOOLS.has(name)) {
      const command = commandOf(a);
      if (command !== null) return { kind: 'command', command, intent: str(a, 'description', 'justification'), cwd: str(a, 'cwd', 'workdir') };
    }
    if (WRITE_TOOLS.has(name) && path !== null && typeof a.content === 'string') return { kind: 'write', path, content: a.content };
    if (EDIT_TOOLS.has(name) && path !== null) {
      const edits = editsOf(a);
      if (edits) return { kind: 'edit', path, edits };
    }
    if (PATCH_TOOLS.has(name)) {
      const patch = str(a, 'input', 'patch', 'command');
      const files = patch === null ? null : parsePatch(patch);
      if (files) return { kind: 'patch', files };
    }
  }
  return { kind: 'fields', fields: fieldsOf(args, schema) };
}

/** The arguments as fields in the schema's order (then any others), each with the schema's title. */
export function fieldsOf(args: unknown, schema: unknown): Field[] {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return [{ key: '', title: 'Arguments', value: args }];
  const values = args as Args;
  const properties =
    schema && typeof schema === 'object' && (schema as Args).properties && typeof (schema as Args).properties === 'object'
      ? ((schema as Args).properties as Record<string, unknown>)
      : {};
  const order = [...Object.keys(properties).filter((k) => k in values), ...Object.keys(values).filter((k) => !(k in properties))];
  return order.map((key) => {
    const title = (properties[key] as Args | undefined)?.title;
    return { key, title: typeof title === 'string' && title.trim() ? title : key, value: values[key] };
  });
}

/**
 * Codex's patch format (`*** Begin Patch`, `*** Add File: p`, `*** Update File: p`, `*** Move
 * to: q`, `*** Delete File: p`, `@@ …` hunks of ` `/`-`/`+` lines, `*** End Patch`) as a diff per
 * file; null when the text is not such a patch (it is then shown as it is).
 */
export function parsePatch(patch: string): PatchFile[] | null {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  const start = lines.findIndex((l) => l.trim() === '*** Begin Patch');
  if (start < 0) return null;
  const files: PatchFile[] = [];
  let file: PatchFile | null = null;
  for (const line of lines.slice(start + 1)) {
    const header = /^\*\*\* (Add|Update|Delete) File: (.*)$/.exec(line);
    if (header) {
      file = { op: header[1].toLowerCase() as PatchFile['op'], path: header[2], moveTo: null, lines: [] };
      files.push(file);
      continue;
    }
    if (line.trim() === '*** End Patch') break;
    if (!file) continue;
    const move = /^\*\*\* Move to: (.*)$/.exec(line);
    if (move) file.moveTo = move[1];
    else if (line.startsWith('@@')) file.lines.push({ kind: 'same', text: line });
    else if (line.startsWith('+')) file.lines.push({ kind: 'added', text: line.slice(1) });
    else if (line.startsWith('-')) file.lines.push({ kind: 'removed', text: line.slice(1) });
    else if (line.startsWith(' ')) file.lines.push({ kind: 'same', text: line.slice(1) });
    else if (line === '*** End of File') continue;
    else if (line !== '') file.lines.push({ kind: 'same', text: line });
  }
  for (const f of files) withWords(f.lines);
  return files.length ? files : null;
}

/** An edit's change as a diff of its old and new text, exactly as given. */
export function editDiff(edit: Edit): DiffLine[] {
  return diffText(edit.before, edit.after);
}

/** The argument a person recognises a call by: the file it writes or edits, the command it runs. */
export function keyArgument(tool: string, args: unknown): string | null {
  const view = describeCall(tool, args);
  switch (view.kind) {
    case 'write':
    case 'edit':
      return view.path;
    case 'command':
      return view.command;
    case 'patch':
      return view.files.map((f) => f.path).join(', ');
    default: {
      if (!args || typeof args !== 'object' || Array.isArray(args)) return null;
      const a = args as Args;
      return str(a, ...PATH_KEYS, 'url', 'uri', 'command', 'cmd', 'query', 'pattern');
    }
  }
}

/**
 * `text` in at most `max` characters, cut in the middle if at all (`git status && cu…| sh`):
 * the end of a command is where a dangerous tail hides, so it always stays. Counts code points.
 */
export function cutMiddle(text: string, max: number): { text: string; cut: boolean } {
  const chars = Array.from(text);
  if (chars.length <= max) return { text, cut: false };
  const keep = Math.max(2, max - 1);
  const tail = Math.floor(keep / 2);
  return { text: `${chars.slice(0, keep - tail).join('')}…${chars.slice(chars.length - tail).join('')}`, cut: true };
}

/**
 * Whether the engine can read what a pending call would overwrite (`file_on_disk`): the
 * built-in write_file (in the workspace) and a coding agent's Write (in the agent's folder).
 */
export function comparesWithDisk(item: { server: string; tool: string; agent?: string | null }): boolean {
  return item.agent ? item.tool === 'Write' : item.server === 'builtin' && item.tool === 'write_file';
}
