// Types of `tether/peer/node` (web/peer/storage-node.js).
import type { PartFile, SwarmFolder, SwarmSource } from './index.js';

export interface NodeFolder extends SwarmFolder {
  /** The folder's real path. */
  readonly path: string;
}
/** Opens `dir` (created if missing) as a swarm download folder. */
export declare function nodeFolder(dir: string): Promise<NodeFolder>;
/** A seeding source over a file on disk. */
export declare function fileSource(path: string): Promise<SwarmSource & { close(): Promise<void> }>;
/** A peer-supplied file name reduced to one safe path component. */
export declare function safeFileName(name: string): string;
export type { PartFile };
