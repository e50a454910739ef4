import type { Document } from './types.js';

/** A Document as a reader sees it (the judge, the text matcher): its title, when it has one, on the line before its text. */
export function passageOf(d: Document): string {
  return d.title === undefined || d.title === '' ? d.text : `${d.title}\n${d.text}`;
}
