# Source: https://github.com/seanie12/SWEP/issues/3
# Report: SWEP (word-embedding perturbation for question answering) runs the QA model twice
#   per step, on the perturbed embeddings (`inputs_embeds * noise`) and on the clean ones,
#   with the same start_positions/end_positions tensors, and adds the two losses:
#   "[torch.cuda.LongTensor [8]] is at version 3; expected version 2". The QA head clamps
#   the label tensors in place before its cross-entropy saves them, so the second call
#   changes the targets the first loss saved. The reporter's fix, which the thread keeps:
#   one forward pass over both batches concatenated.
# In-place op: line 36 (the second call: the QA head's `start_positions.clamp_(...)`).
# Saved by: line 33 (the first call: its cross-entropy keeps the label tensors).
# Fix: fixed/swep_noise_qa_two_forwards.py, the reporter's fix from the thread.
# Shrunk: the thread's model is BERT, whose head the installed transformers no longer clamps
#   in place (pull request #12026); RemBERT's QA head in the installed transformers still
#   does, so a tiny random RemBERT stands for it. Random tokens and noise, one step.
import torch
from transformers import RemBertConfig, RemBertForQuestionAnswering

torch.manual_seed(0)
config = RemBertConfig(vocab_size=100, input_embedding_size=8, hidden_size=16,
                       num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                       output_embedding_size=8, max_position_embeddings=32)
qa_model = RemBertForQuestionAnswering(config)
embeddings = qa_model.get_input_embeddings()
optimizer = torch.optim.AdamW(qa_model.parameters(), lr=1e-4)

input_ids = torch.randint(0, 100, (4, 12))
attention_mask = torch.ones_like(input_ids)
start_positions = torch.tensor([1, 3, 40, 5])  # one answer lies outside the window
end_positions = torch.tensor([2, 6, 40, 9])

inputs_embeds = embeddings(input_ids)
noise = 1 + 0.1 * torch.randn_like(inputs_embeds)
noise_outputs = qa_model(inputs_embeds=inputs_embeds * noise,  # [saves]
                         attention_mask=attention_mask, start_positions=start_positions,
                         end_positions=end_positions)
outputs = qa_model(inputs_embeds=inputs_embeds, attention_mask=attention_mask,  # [inplace]
                   start_positions=start_positions, end_positions=end_positions)
loss = outputs.loss + noise_outputs.loss
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
