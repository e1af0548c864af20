/**
 * Event filters, as controller-runtime's predicates: which watch events are worth a reconcile. Each
 * remembers what it last let through per key, so it can tell a real change from a repeat.
 */
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** True when the event should enqueue its object. */
export type Predicate<T> = (type: EventType, key: string, object: T) => boolean;

/**
 * A change that is worth a reconcile changes `fingerprint`; an update that leaves it equal (a
 * status write, a child's metrics) is dropped. Creations and deletions always pass.
 */
export function fingerprintChanged<T>(fingerprint: (object: T) => unknown): Predicate<T> {
  const last = new Map<string, unknown>();
  return (type, key, object) => {
    if (type === 'DELETED') {
      last.delete(key);
      return true;
    }
    const print = fingerprint(object);
    if (type === 'MODIFIED' && last.get(key) === print) return false;
    last.set(key, print);
    return true;
  };
}

/**
 * GenerationChangedPredicate: only spec changes (which bump metadata.generation) pass, so the
 * controller's own status writes do not trigger a reconcile each.
 */
export const generationChanged = <T extends { metadata: object }>(): Predicate<T> =>
  fingerprintChanged((object: T) => (object.metadata as { generation?: unknown }).generation);
