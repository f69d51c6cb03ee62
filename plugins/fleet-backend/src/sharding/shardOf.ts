/** The shard of a cluster: the FNV-1a hash (32 bits) of its name, mod `shards`. */
export function shardOf(name: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(name, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
