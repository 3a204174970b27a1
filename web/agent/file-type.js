// What a served file's offer says it is (agent-bus-notes.md § Simple one-to-one transfer: a
// file_offer carries a mimeType and a kind, "file" or "image"), guessed from its name's extension
// as the public implementation guesses it, so a ninja-p2p receiver shows our images as images.
// A table of the common types rather than the mime-types package (in package-lock through the MCP
// SDK): that would be a new runtime dependency, and its list names a `.ts` file video/mp2t, which
// in an agent's shared folder is TypeScript far more often than an MPEG stream.
import path from 'node:path';

const IMAGES = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.bmp': 'image/bmp',
};

const OTHERS = {
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.mp4': 'video/mp4',
};

/**
 * The offer's `mimeType` and `kind` for a file called `name`: an image extension is kind "image",
 * anything else kind "file"; an extension not listed is application/octet-stream.
 * @param {string} name
 * @returns {{mimeType: string, kind: 'file' | 'image'}}
 */
export function fileType(name) {
  const ext = path.posix.extname(name).toLowerCase();
  if (Object.hasOwn(IMAGES, ext)) return { mimeType: IMAGES[ext], kind: 'image' };
  return {
    mimeType: Object.hasOwn(OTHERS, ext) ? OTHERS[ext] : 'application/octet-stream',
    kind: 'file',
  };
}
