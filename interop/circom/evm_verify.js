// Compiles Solidity verifiers with solc and calls them on an EVM (@ethereumjs/evm,
// whose BN254 precompiles 0x06-0x08 are those of Ethereum's Prague rules), for
// crucible's verifier-export tests (cli/tests/evm_verifier.rs).
//
// Usage: node evm_verify.js CASES.json
// CASES.json: [{"source": "<Solidity>", "contract": "Groth16Verifier",
//               "calls": [{"name", "a": [x, y], "b": [[x1, x0], [y1, y0]],
//                          "c": [x, y], "input": [...]}]}], numbers as decimal strings.
// Prints one JSON object: for each contract its bytecode size, and for each call
// {"name", "verdict": true | false | "reverted", "gas"}.
'use strict';
const fs = require('fs');
const solc = require('solc');
const { createEVM } = require('@ethereumjs/evm');
const { bytesToHex, hexToBytes } = require('@ethereumjs/util');

// The gas a transaction may use on Ethereum (EIP-7825's cap).
const GAS_LIMIT = 16777216n;

function compile(source, contract) {
  const input = {
    language: 'Solidity',
    sources: { 'Verifier.sol': { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['evm.bytecode.object', 'evm.methodIdentifiers'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors || []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc ${solc.version()}:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const warnings = (output.errors || []).filter((e) => e.severity !== 'error');
  const compiled = output.contracts['Verifier.sol'][contract];
  return { compiled, warnings: warnings.map((w) => w.formattedMessage) };
}

// A static argument list: each number one 32-byte big-endian word.
function word(decimal) {
  return BigInt(decimal).toString(16).padStart(64, '0');
}

function calldata(selector, call) {
  const words = [...call.a, ...call.b[0], ...call.b[1], ...call.c, ...call.input];
  return hexToBytes('0x' + selector + words.map(word).join(''));
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const evm = await createEVM();
  const report = { solc: solc.version(), contracts: [] };
  for (const c of cases) {
    const { compiled, warnings } = compile(c.source, c.contract);
    const inputs = c.calls.length > 0 ? c.calls[0].input.length : 0;
    const signature = inputs > 0
      ? `verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[${inputs}])`
      : 'verifyProof(uint256[2],uint256[2][2],uint256[2])';
    const selector = compiled.evm.methodIdentifiers[signature];
    if (!selector) {
      throw new Error(`${signature} is not among ${Object.keys(compiled.evm.methodIdentifiers)}`);
    }
    const deployed = await evm.runCall({
      data: hexToBytes('0x' + compiled.evm.bytecode.object),
      gasLimit: GAS_LIMIT,
    });
    if (deployed.execResult.exceptionError) {
      throw new Error(`deploying ${c.contract}: ${deployed.execResult.exceptionError.error}`);
    }
    const address = deployed.createdAddress;
    const calls = [];
    for (const call of c.calls) {
      const result = await evm.runCall({ to: address, data: calldata(selector, call), gasLimit: GAS_LIMIT });
      const out = result.execResult;
      let verdict;
      if (out.exceptionError) {
        verdict = 'reverted';
      } else {
        const hex = bytesToHex(out.returnValue);
        verdict = BigInt(hex) === 1n;
      }
      calls.push({ name: call.name, verdict, gas: Number(out.executionGasUsed) });
    }
    report.contracts.push({
      contract: c.contract,
      bytecode_bytes: compiled.evm.bytecode.object.length / 2,
      warnings,
      calls,
    });
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
  process.stderr.write(`evm_verify.js: ${e.stack || e}\n`);
  process.exit(1);
});
