// Syntax highlighting for files shown in a call's view (a write's content, a diff's lines), as
// tokens rather than HTML: lowlight (highlight.js grammars, output as a syntax tree) is turned
// into lines of `{ text, cls }`, and the text is rendered through <Visible>, so hidden
// characters stay marked and no markup from a file ever reaches the page. Only a few grammars
// are bundled; other files show as plain text. Loaded on first use (CodeView imports it
// dynamically), so the grammars stay out of the window's first bundle.
import { createLowlight } from 'lowlight';
import { plainLines, pushText, type Token } from './tokens';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const lowlight = createLowlight({ bash, css, go, ini, javascript, json, markdown, python, rust, typescript, xml, yaml });

/** Grammar by file extension (or whole name, for files like `Makefile`-less dotfiles). */
const BY_EXTENSION: Record<string, string> = {
  sh: 'bash', bash: 'bash', zsh: 'bash',
  css: 'css', scss: 'css',
  go: 'go',
  ini: 'ini', toml: 'ini', cfg: 'ini', conf: 'ini',
  js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
  json: 'json', jsonl: 'json',
  md: 'markdown', markdown: 'markdown',
  py: 'python',
  rs: 'rust',
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript',
  html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml', svelte: 'xml', vue: 'xml',
  yml: 'yaml', yaml: 'yaml',
};

/** More than this and a file is shown plain: highlighting it would hold up the window. */
const MAX_HIGHLIGHTED_CHARS = 200_000;

/** The grammar for a path by its extension, or null (plain text). */
export function languageOf(path: string): string | null {
  const name = path.split(/[\\/]/).pop() ?? '';
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null;
}

type Node = { type: string; value?: string; children?: Node[]; properties?: { className?: unknown } };

/** `code` as lines of tokens, highlighted as `language` when it is one of the bundled grammars. */
export function highlightLines(code: string, language: string | null): Token[][] {
  if (!language || code.length > MAX_HIGHLIGHTED_CHARS) return plainLines(code);
  const lines: Token[][] = [[]];
  const walk = (node: Node, cls: string) => {
    if (node.type === 'text') pushText(lines, node.value ?? '', cls);
    const own = node.properties?.className;
    const inner = Array.isArray(own) ? [cls, ...own].filter(Boolean).join(' ') : cls;
    for (const child of node.children ?? []) walk(child, inner);
  };
  walk(lowlight.highlight(language, code) as unknown as Node, '');
  return lines;
}
