import { DEMO_DEFAULTS } from './defaults.js';

/** One note, owned by the subject (user or client) that wrote it. */
export interface Note {
  id: string;
  text: string;
  createdAt: string;
}

export interface NotesStoreOptions {
  /** Upper bound of notes kept per subject; the oldest note is dropped beyond it (demo memory guard). */
  maxNotesPerSubject?: number;
  /** Clock, injectable for deterministic tests. */
  now?: () => Date;
}

/**
 * Where the demo keeps notes: in this process ({@link NotesStore}) or, for several replicas
 * behind one balancer, in Redis ({@link RedisNotesStore}). Partitioned by token subject.
 */
export interface NotesRepository {
  list(subject: string): readonly Note[] | Promise<readonly Note[]>;
  add(subject: string, text: string): Note | Promise<Note>;
}

/**
 * In-memory notes, partitioned by token subject so one caller can never read another's notes.
 * Demo only: nothing survives a restart, and each replica has its own.
 */
export class NotesStore implements NotesRepository {
  private readonly bySubject = new Map<string, { nextId: number; notes: Note[] }>();
  private readonly maxNotes: number;
  private readonly now: () => Date;

  constructor(options: NotesStoreOptions = {}) {
    this.maxNotes = options.maxNotesPerSubject ?? DEMO_DEFAULTS.maxNotesPerSubject;
    this.now = options.now ?? (() => new Date());
  }

  list(subject: string): readonly Note[] {
    return (this.bySubject.get(subject)?.notes ?? []).map((note) => ({ ...note }));
  }

  add(subject: string, text: string): Note {
    let entry = this.bySubject.get(subject);
    if (!entry) {
      entry = { nextId: 1, notes: [] };
      this.bySubject.set(subject, entry);
    }
    const note: Note = { id: `note-${entry.nextId++}`, text, createdAt: this.now().toISOString() };
    entry.notes.push({ ...note });
    if (entry.notes.length > this.maxNotes) entry.notes.splice(0, entry.notes.length - this.maxNotes);
    return note;
  }
}
