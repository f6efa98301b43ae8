/** What the person chose in the permission prompt. */
export type PromptChoice = { approve: boolean; forChat: boolean; reason: string | null };
