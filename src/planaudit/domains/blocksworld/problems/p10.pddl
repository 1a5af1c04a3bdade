;; UNSOLVABLE: p06 with one goal fact added, (on c f), so that
;; f on a, a on c, c on f would form a three-block cycle.
;; Initial towers (top -> bottom): b d f | a g | c e
(define (problem blocksworld-p10)
  (:domain blocksworld)
  (:objects a b c d e f g - block)
  (:init
    (clear b)
    (on b d)
    (on d f)
    (ontable f)
    (clear a)
    (on a g)
    (ontable g)
    (clear c)
    (on c e)
    (ontable e)
    (handempty))
  (:goal (and
    (on f a)
    (on a c)
    (on c f)
    (on e b)
    (on b d)
    (clear g))))
