import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';

/** One Converse call (Amazon Bedrock): the document writer's only use of the SDK. */
export interface ConverseRequest {
  modelId: string;
  system: string;
  prompt: string;
  maxTokens: number;
}

/** One model call returning the answer's text: the seam between the Bedrock writer and the SDK (faked in tests). */
export type Converse = (req: ConverseRequest, signal: AbortSignal) => Promise<string>;

let bedrockClient: BedrockRuntimeClient | undefined;

/** The Converse API (model-agnostic; IAM action bedrock:InvokeModel on the model's ARN). Client created once per container. */
export const bedrockConverse: Converse = async ({ modelId, system, prompt, maxTokens }, signal) => {
  const client = (bedrockClient ??= new BedrockRuntimeClient({}));
  const out = await client.send(
    new ConverseCommand({ modelId, system: [{ text: system }], messages: [{ role: 'user', content: [{ text: prompt }] }], inferenceConfig: { maxTokens, temperature: 0 } }),
    { abortSignal: signal },
  );
  return (out.output?.message?.content ?? []).map((c) => c.text ?? '').join('');
};
