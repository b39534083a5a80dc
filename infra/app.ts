/** `cdk synth` / `cdk deploy` entry point (cdk.json "app"). Configuration: CDK context, see docs/deploy.md. */
import { buildApp } from './build.ts';

buildApp().app.synth();
