import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';

/** One Converse call (Amazon Bedrock): the document writer's only use of the SDK. */
export interface ConverseRequest {
  modelId: string;
  system: string;
  prompt: string;
  maxTokens: number;
}

/** One model call returning the answer's text: the seam between the Bedrock writer and the SDK (faked in tests). */
export type Converse = (req: ConverseRequest, signal: AbortSignal) => Promise<string>;

// The SDK client (shared/ai/bedrock-sdk.ts) is imported with the first call, not at cold start.
let bedrock:
  | Promise<{ client: BedrockRuntimeClient; ConverseCommand: typeof import('#shared/ai/bedrock-sdk.ts').ConverseCommand }>
  | undefined;
const bedrockSdk = () =>
  (bedrock ??= import('#shared/ai/bedrock-sdk.ts').then((m) => ({
    client: new m.BedrockRuntimeClient({}),
    ConverseCommand: m.ConverseCommand,
  })));

/** The Converse API (model-agnostic; IAM action bedrock:InvokeModel on the model's ARN). Client created once per container. */
export const bedrockConverse: Converse = async ({ modelId, system, prompt, maxTokens }, signal) => {
  const { client, ConverseCommand } = await bedrockSdk();
  const out = await client.send(
    new ConverseCommand({
      modelId,
      system: [{ text: system }],
      messages: [{ role: 'user', content: [{ text: prompt }] }],
      inferenceConfig: { maxTokens, temperature: 0 },
    }),
    { abortSignal: signal },
  );
  return (out.output?.message?.content ?? []).map((c) => c.text ?? '').join('');
};
