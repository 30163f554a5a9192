/** An AI Agent as /app/api returns it (the /api/v1 shape). */
export interface Agent {
  id: string;
  name: string;
  description: string | null;
  status: 'draft' | 'active' | 'paused' | 'archived';
  instructions: string;
  welcome_message: string | null;
  model: string | null;
  temperature: number | null;
  knowledge: { title: string; content: string }[];
  lead_capture: { enabled: boolean; fields: string[]; prompt: string | null };
  allowed_origins: string[];
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

/** A message of a conversation. */
export interface Message {
  id: string;
  role: 'user' | 'assistant' | 'operator';
  content: string;
  created_at: string;
  author: { type: string; id: string | null };
}

/** A conversation. */
export interface Conversation {
  id: string;
  chatbot_id: string;
  status: 'open' | 'closed';
  mode: 'agent' | 'human';
  channel: string;
  visitor: { id: string; name: string | null; email: string | null };
  message_count: number;
  last_message_at: string | null;
  created_at: string;
}

/** A lead. */
export interface Lead {
  id: string;
  chatbot_id: string | null;
  conversation_id: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  status: string;
  source: string;
  created_at: string;
}

/** A list page. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}
