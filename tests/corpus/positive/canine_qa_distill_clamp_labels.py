# Source: https://github.com/huggingface/transformers/pull/12026
# Report: distilling a question-answering model (issue #11626): the student and the teacher
#   are called with the same start_positions/end_positions tensors. The QA head clamps them
#   in place (`start_positions.clamp_(0, ignored_index)`) before its cross-entropy, which
#   saves them as targets; the teacher's call clamps them again, and the student's backward
#   finds its saved targets at a newer version ("[torch.LongTensor [2]] is at version 2;
#   expected version 1"). The pull request made BERT's head clamp out of place; other heads
#   of the installed transformers, CANINE's among them (transformers issue #47741), still
#   clamp in place.
# In-place op: line 39 (the teacher's call: CanineForQuestionAnswering clamps the caller's
#   label tensors in place).
# Saved by: line 36 (the student's call: its cross-entropy keeps start_positions and
#   end_positions as targets).
# Fix: fixed/canine_qa_distill_clamp_labels.py, the usual fix on the user's side (the
#   library's fix, an out-of-place clamp, is not in CANINE's head): each model gets its own
#   copy of the labels.
# Shrunk: tiny randomly initialised CANINE models from the installed transformers instead of
#   pretrained BERT checkpoints; the distillation loss reduced to the student's QA loss plus
#   a KL term on the start logits; one step.
import torch
import torch.nn.functional as F
from transformers import CanineConfig, CanineForQuestionAnswering

torch.manual_seed(0)
config = CanineConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, downsampling_rate=2, num_hash_buckets=64,
                      num_hash_functions=2, local_transformer_stride=4)
student = CanineForQuestionAnswering(config)
teacher = CanineForQuestionAnswering(config).eval()
optimizer = torch.optim.AdamW(student.parameters(), lr=1e-4)

input_ids = torch.randint(0, 200, (2, 8))
start_positions = torch.tensor([3, 99])  # the second answer lies outside the sequence
end_positions = torch.tensor([5, 99])

outputs = student(input_ids=input_ids, start_positions=start_positions,  # [saves]
                  end_positions=end_positions)
with torch.no_grad():
    teacher_outputs = teacher(input_ids=input_ids, start_positions=start_positions,  # [inplace]
                              end_positions=end_positions)
kd = F.kl_div(F.log_softmax(outputs.start_logits, -1),
              F.softmax(teacher_outputs.start_logits, -1), reduction="batchmean")
loss = outputs.loss + kd
loss.backward()
optimizer.step()
print("loss", loss.item())
