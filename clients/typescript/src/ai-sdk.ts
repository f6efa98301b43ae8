// The Vercel AI SDK (`ai`): Airlock answers the `tool-approval-request` parts of a result.
//
// Give the tools that need a person `needsApproval: true` (or `approvals.needsApproval(name)`,
// which lets Airlock's rules and grants run a call without asking); when a result holds
// `tool-approval-request` parts, `answer(result.content, tools)` posts each call to Airlock,
// waits for its decision and returns the tool message of `tool-approval-response` parts
// (`approved`, and the person's `reason` for a denial) to append after `result.response.messages`.
// It also takes the messages saved before the program exited: the approval requests of their
// last assistant message are answered, the same calls finding the same decisions.
//
// Edits are impossible here: a `tool-approval-response` has no arguments to run instead, so
// the calls are posted as not editable and the inbox offers no edit for them.

import { asSchema } from 'ai';
import { Airlock, Decision, StillPending, alreadyRan, denialMessage } from './index.js';

/** A call waiting for approval, from a result's content or a saved assistant message. */
interface PendingCall {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
}

/** What `answer` adds to the messages. */
export interface ToolApprovalMessage {
  role: 'tool';
  content: Array<{ type: 'tool-approval-response'; approvalId: string; approved: boolean; reason?: string }>;
}

type Part = { type: string; [key: string]: unknown };
type ToolLike = { description?: string; inputSchema?: unknown };

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The approval requests of a result's content, or of the last assistant message of messages. */
function pendingCalls(source: ReadonlyArray<unknown>): PendingCall[] {
  const parts = source as ReadonlyArray<Part>;
  if (parts.some((p) => p?.type === 'tool-approval-request' && p.toolCall)) {
    return parts
      .filter((p) => p.type === 'tool-approval-request')
      .map((p) => {
        const call = record(p.toolCall);
        return {
          approvalId: String(p.approvalId),
          toolCallId: String(call.toolCallId),
          toolName: String(call.toolName),
          input: record(call.input),
        };
      });
  }
  const messages = source as ReadonlyArray<{ role?: string; content?: unknown }>;
  const last = [...messages].reverse().find((m) => m?.role === 'assistant');
  const content = Array.isArray(last?.content) ? (last!.content as Part[]) : [];
  const calls = new Map(content.filter((p) => p.type === 'tool-call').map((p) => [String(p.toolCallId), p]));
  return content
    .filter((p) => p.type === 'tool-approval-request')
    .map((p) => {
      const call = calls.get(String(p.toolCallId));
      return {
        approvalId: String(p.approvalId),
        toolCallId: String(p.toolCallId),
        toolName: String(call?.toolName ?? p.toolName ?? 'tool'),
        input: record(call?.input ?? p.input),
      };
    });
}

async function schemaOf(tool: ToolLike | undefined): Promise<unknown> {
  if (!tool?.inputSchema) return undefined;
  try {
    return await asSchema(tool.inputSchema as Parameters<typeof asSchema>[0]).jsonSchema;
  } catch {
    return undefined; // a schema Airlock cannot read only loses the inbox's check
  }
}

export interface AISDKApprovalsOptions {
  /** One conversation: grants "for this chat" apply to it. */
  session: string;
}

/** Airlock's decisions for one conversation of a Vercel AI SDK program. */
export class AISDKApprovals {
  readonly airlock: Airlock;
  readonly session: string;

  constructor(airlock: Airlock, options: AISDKApprovalsOptions) {
    this.airlock = airlock;
    this.session = options.session;
  }

  /** A `needsApproval` for the tool `name`: asks Airlock's policy, so a call its rules or
   * grants allow runs without asking; every other call becomes an approval request. */
  needsApproval(name: string, tool?: ToolLike) {
    return async (input: unknown, options: { toolCallId: string }): Promise<boolean> => {
      const decision = await this.airlock.request({
        session: this.session,
        tool: name,
        args: record(input),
        toolCallId: options.toolCallId,
        schema: await schemaOf(tool),
        description: tool?.description,
        editable: false,
      });
      return !(decision.approvalId === undefined && decision.verdict === 'allow');
    };
  }

  /** Posts every approval request of `source` (a result's `content`, or saved messages) and
   * returns each decision as it stands (pending while nobody decided), by approval id. */
  async submit(source: ReadonlyArray<unknown>, tools: Record<string, ToolLike> = {}): Promise<Map<string, Decision>> {
    const decisions = new Map<string, Decision>();
    for (const call of pendingCalls(source)) {
      const tool = tools[call.toolName];
      decisions.set(
        call.approvalId,
        await this.airlock.request({
          session: this.session,
          tool: call.toolName,
          args: call.input,
          toolCallId: call.toolCallId,
          schema: await schemaOf(tool),
          description: tool?.description,
          editable: false,
        }),
      );
    }
    return decisions;
  }

  /** The tool message answering every approval request of `source` with Airlock's decisions,
   * waiting `timeoutMs` at most (none: as long as it takes). Throws `StillPending` when one is
   * undecided at the deadline and `AirlockError` when Airlock cannot answer (nothing approved). */
  async answer(
    source: ReadonlyArray<unknown>,
    tools: Record<string, ToolLike> = {},
    timeoutMs?: number,
  ): Promise<ToolApprovalMessage> {
    const waited = new Map<string, Decision>();
    for (const [approvalId, decision] of await this.submit(source, tools)) {
      waited.set(approvalId, await this.airlock.wait(decision, timeoutMs));
    }
    const pending = [...waited].filter(([, d]) => d.status === 'pending').map(([id, d]) => d.approvalId ?? id);
    if (pending.length) throw new StillPending(pending);
    const content: ToolApprovalMessage['content'] = [];
    for (const [approvalId, decision] of waited) {
      if (decision.verdict !== 'allow') {
        content.push({ type: 'tool-approval-response', approvalId, approved: false, reason: denialMessage(decision) });
      } else if (await this.airlock.claim(decision)) {
        content.push({ type: 'tool-approval-response', approvalId, approved: true });
      } else {
        const again = decision.approvalId ? await this.airlock.decision(decision.approvalId) : decision;
        content.push({ type: 'tool-approval-response', approvalId, approved: false, reason: alreadyRan(again) });
      }
    }
    return { role: 'tool', content };
  }
}
