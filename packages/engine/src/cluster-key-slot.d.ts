/** cluster-key-slot (ioredis's own) ships no types: its default export is all longrun uses. */
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0..16383) of a key, honouring its `{hash tag}`. */
  export default function generate(key: string | Buffer): number;
}
